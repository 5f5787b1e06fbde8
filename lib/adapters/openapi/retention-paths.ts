/** A tenant's retention policy per data class (docs/retention.md), under the audit tag: retention is the audit log's. */
import {
  etagHeader,
  ifMatchParam,
  jsonContent,
  type JsonSchema,
  optionalInBody,
  problems,
  ref,
  type SchemaEntries,
} from "@/lib/adapters/openapi/shared-components";
import { RetentionPolicyListSchema, RetentionTermSchema } from "@/lib/adapters/api/retention-resources";
import { RetentionTermChangeSchema } from "@/lib/use-cases/retention/retention-terms";
import { dataClasses } from "@/lib/model/retention/data-classes-held";

export const retentionRequestSchemas: SchemaEntries = [["RetentionTermChange", RetentionTermChangeSchema]];

export const retentionResponseSchemas: SchemaEntries = [
  ["RetentionTerm", RetentionTermSchema],
  ["RetentionPolicyList", RetentionPolicyListSchema],
];

export function retentionFieldsOptionalInBody(requestSchemas: Record<string, JsonSchema>): void {
  optionalInBody(
    requestSchemas.RetentionTermChange,
    "expected_version",
    "The class's version you read (0 for a class never set). Required here unless sent as If-Match (a version from 1); if both are sent they must agree.",
  );
}

const readers =
  "Bearer token, or the console session (people); permission audit:read (auditors, engineers, admins). The caller's tenant only.";
const dataClass = {
  name: "class",
  in: "path",
  required: true,
  schema: { type: "string", enum: [...dataClasses] },
  description: "The data class; any other name is 404.",
};

export function retentionPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/retention/policies": {
      get: {
        tags: ["audit"],
        operationId: "listRetentionPolicies",
        summary: "The tenant's retention term for every data class",
        description: readers,
        responses: {
          200: { description: "Every class, with its version.", content: jsonContent(ref("RetentionPolicyList")) },
          ...problems(401, 403),
        },
      },
    },
    "/api/v1/retention/policies/{class}": {
      get: {
        tags: ["audit"],
        operationId: "getRetentionPolicy",
        summary: "The tenant's retention term for one data class",
        description: readers,
        parameters: [dataClass],
        responses: {
          200: {
            description: "The term; ETag is its version (none for a class never set, version 0).",
            headers: etagHeader,
            content: jsonContent(ref("RetentionTerm")),
          },
          ...problems(401, 403, 404),
        },
      },
      put: {
        tags: ["audit"],
        operationId: "setRetentionPolicy",
        summary: "Set or clear (keep_days null) one data class's retention term",
        description:
          "Bearer token, or the console session (people); permission audit:retention (admins), as `verity retention policy set` and the console's form. " +
          "Compare-and-swap on the class's version (If-Match or expected_version): 409 and nothing changed when it moved. Audited (retention.policy_set) in the tenant's system chain.",
        parameters: [dataClass, ifMatchParam],
        requestBody: { required: true, content: jsonContent(ref("RetentionTermChange")) },
        responses: {
          200: { description: "The term now.", headers: etagHeader, content: jsonContent(ref("RetentionTerm")) },
          ...problems(400, 401, 403, 404, 409, 413, 415),
        },
      },
    },
  };
}
