import { z } from "zod";
import { FieldErrorSchema, InvariantViolationSchema, ProblemSchema } from "@/lib/adapters/api/shared-resources";

/**
 * What every resource's part of the OpenAPI document (lib/adapters/openapi/*-paths.ts)
 * is built with: the zod-to-JSON-Schema conversion, the problem responses,
 * and the headers and parameters more than one resource uses.
 */
export type JsonSchema = Record<string, unknown>;

/** Named component schemas, in the order the document lists them. */
export type SchemaEntries = Array<[string, z.ZodType]>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * One registry for every entry, so that a schema another one contains is a $ref
 * to its component rather than a copy: the document converts all request
 * entries in one call and all response entries in another.
 */
export function componentSchemas(entries: SchemaEntries, io: "input" | "output"): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of entries) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io,
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ zodSchema, jsonSchema }) => {
      // A response object may gain fields later: only strict (fixed-schema) objects promise none.
      const def = zodSchema._zod.def;
      if (io === "output" && def.type === "object" && !def.catchall && jsonSchema.additionalProperties === false)
        delete jsonSchema.additionalProperties;
    },
  });
  return Object.fromEntries(Object.entries(schemas).map(([id, s]) => [id, stripMeta(s as JsonSchema)]));
}

/** `$schema` and `$id` are noise inside components: the document fixes the dialect. */
function stripMeta(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

export function queryParameters(schema: z.ZodObject): JsonSchema[] {
  return Object.entries(schema.shape).map(([name, member]) => {
    const s = stripMeta(z.toJSONSchema(member as z.ZodType, { io: "input" }) as JsonSchema);
    const { description, ...rest } = s;
    return {
      name,
      in: "query",
      required: !(member as z.ZodType).safeParse(undefined).success,
      schema: rest,
      ...(description ? { description } : {}),
    };
  });
}

/** The problem+json body every error answers with, and the parts it names. */
export const problemSchemas: SchemaEntries = [
  ["Problem", ProblemSchema],
  ["FieldError", FieldErrorSchema],
  ["InvariantViolation", InvariantViolationSchema],
];

const problemStatuses = {
  400: "Invalid request: `errors` names each offending field.",
  401: "Missing, malformed, unknown or revoked bearer token (or, on a provider webhook, a missing or wrong signature).",
  403: "The token's role lacks the permission, or the actor may not take this edge.",
  404: "No such task, execution or workflow.",
  409: "Version conflict (`current_version`), lease conflict (another holder, or a stale fencing token: nothing was written; an outcome report is the exception, see recordOutcome), or an id reused for a different request.",
  413: "The body is larger than the server's limit (`max_bytes`).",
  415: "The body is not application/json.",
  422: "The change would break an invariant (`violations` names each one), or a published definition is invalid (`problems` lists each at its JSON path).",
  500: "Unexpected server error; `request_id` is in the server log.",
} as const;
type ProblemStatus = keyof typeof problemStatuses;

export function problems(...statuses: ProblemStatus[]): Record<string, JsonSchema> {
  return Object.fromEntries(
    [...statuses, 500 as const].map((s) => [String(s), { $ref: `#/components/responses/Problem${s}` }]),
  );
}

/** components.responses: one Problem<status> for each status `problems` refers to. */
export function problemResponses(): Record<string, JsonSchema> {
  return Object.fromEntries(
    Object.entries(problemStatuses).map(([status, description]) => [
      `Problem${status}`,
      {
        description,
        ...(status === "401"
          ? { headers: { "WWW-Authenticate": { schema: { type: "string", example: 'Bearer realm="verity"' } } } }
          : {}),
        content: { "application/problem+json": { schema: ref("Problem") } },
      },
    ]),
  );
}

export const jsonContent = (schema: JsonSchema) => ({ "application/json": { schema } });
export const etagHeader = {
  ETag: {
    description: "The task version, quoted: send it back as If-Match.",
    schema: { type: "string", example: '"5"' },
  },
};
export const ifMatchParam = {
  name: "If-Match",
  in: "header",
  required: false,
  schema: { type: "string", example: '"5"' },
};
export const fencingTokenParam = {
  name: "Fencing-Token",
  in: "header",
  required: false,
  description: "Your lease's fencing token; or fencing_token in the body. If both are sent they must agree.",
  schema: { type: "string", pattern: "^[0-9]{1,18}$", example: "3" },
};
export const fencingTokenHeader = {
  "Fencing-Token": { description: "The lease's fencing token: send it with every write.", schema: { type: "string" } },
};
export const taskId = { name: "id", in: "path", required: true, schema: { type: "string" }, description: "Task id." };

/** A request schema whose field may come from a header instead: no longer required in the body, and said so. */
export function optionalInBody(schema: JsonSchema | undefined, field: string, description: string): void {
  const s = schema as { required?: string[]; properties?: Record<string, JsonSchema> } | undefined;
  if (s?.required) {
    const required = s.required.filter((f) => f !== field);
    if (required.length > 0) s.required = required;
    else delete s.required;
  }
  if (s?.properties?.[field]) s.properties[field].description = description;
}

// expected_version may come from If-Match and fencing_token from Fencing-Token; the API fills them in before validating.
export const versionDescription =
  "The version the change is based on. Required here unless sent as If-Match; if both are sent they must agree.";
export const tokenDescription =
  "Your lease's fencing token; or send it as Fencing-Token. If both are sent they must agree. A stale token is a 409 lease-conflict and nothing is written.";
