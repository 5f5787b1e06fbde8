import { z } from "zod";
import { authenticateApiTokenWithTenant } from "@/lib/stores/api-tokens";
import { requirePermissionRecorded } from "@/lib/adapters/auth/audit-trail";
import type { Permission, Principal } from "@/lib/model/permissions";
import { dbFor, getPlatformDb } from "@/lib/db/client";
import { requireTenantStatusActive } from "@/lib/adapters/auth/tenant-standing";
import { LeaseRequestSchema } from "@/lib/stores/leases";
import { TransitionInputSchema, type TransitionInput } from "@/lib/stores/tasks/task-transitions";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { getEnv } from "@/lib/config/env";
import { AppError, fieldErrorsFromZod } from "@/lib/core/errors";
import { authenticateBearer } from "@/lib/adapters/http/bearer";
import { assertJsonContentType, isPlainObject, readBodyBytes, readJsonBody } from "@/lib/adapters/http/body";
import { parseIfMatch, withExpectedVersion } from "@/lib/adapters/http/preconditions";
import { validationError } from "@/lib/adapters/http/problem";

/**
 * The app-specific glue between the generic lib/adapters/http helpers and Verity:
 * which database authenticates tokens, which limit applies to bodies, and the
 * request parsing the engine's own schemas need a little help with.
 */

/** 401 without a valid bearer token, 403 without the permission (recorded in the audit log). */
export async function requireApiPrincipal(request: Request, permission: Permission): Promise<Principal> {
  // The token says which tenant: looked up on the platform's connection with
  // the tenant's standing (one statement), then everything runs as that tenant.
  const authenticated = await authenticateBearer(request, (token) =>
    authenticateApiTokenWithTenant(getPlatformDb(), token),
  );
  const principal = requireTenantStatusActive(authenticated.principal, authenticated.tenantStatus);
  return requirePermissionRecorded(
    dbFor(principal),
    principal,
    permission,
    `${request.method} ${new URL(request.url).pathname}`,
  );
}

export function readApiJson(request: Request): Promise<unknown> {
  return readJsonBody(request, { maxBytes: getEnv().VERITY_MAX_BODY_BYTES });
}

/** A LangGraph checkpoint or writes body: a graph's state, under its own, larger limit. */
export function readGraphApiJson(request: Request): Promise<unknown> {
  return readJsonBody(request, { maxBytes: getEnv().VERITY_MAX_GRAPH_BODY_BYTES });
}

/**
 * A body that may be left out (lease requests, whose every field has a
 * default or may come from a header): no Content-Type and no bytes is `{}`;
 * anything sent is held to the same rules as readApiJson.
 */
export async function readOptionalApiJson(request: Request): Promise<unknown> {
  if (request.headers.get("content-type") !== null) return readApiJson(request);
  const bytes = await readBodyBytes(request, getEnv().VERITY_MAX_BODY_BYTES);
  // Bytes without a media type are refused (415) like on every other route.
  if (bytes.byteLength > 0) assertJsonContentType(null);
  return {};
}

const fencingTokenPattern = /^[0-9]{1,18}$/;

/** The Fencing-Token header, undefined when absent; the same format as the body's fencing_token. */
export function parseFencingTokenHeader(header: string | null): string | undefined {
  if (header === null || header.trim() === "") return undefined;
  const value = header.trim();
  if (!fencingTokenPattern.test(value))
    throw validationError([{ field: "Fencing-Token", message: "must be the decimal fencing token of your lease" }]);
  return value;
}

/**
 * The body with `fencing_token` filled in from the Fencing-Token header, the
 * way If-Match fills `expected_version`: both may be sent, and when they
 * disagree the request is refused rather than guessing which lease the
 * writer meant (a worker holding two tokens is the bug fencing exists for).
 */
export function withFencingToken(body: unknown, header: string | null): unknown {
  const token = parseFencingTokenHeader(header);
  if (!isPlainObject(body) || token === undefined) return body;
  const inBody = body.fencing_token;
  if (inBody === undefined) return { ...body, fencing_token: token };
  if (typeof inBody === "string" && inBody !== token) {
    throw validationError([
      {
        field: "fencing_token",
        message: `is ${inBody} but Fencing-Token says ${token}; send one, or the same in both`,
      },
    ]);
  }
  return body;
}

/** If-Match and Fencing-Token merged into a write's body: the two preconditions an agent's write carries. */
export function withWritePreconditions(body: unknown, headers: Headers): unknown {
  return withFencingToken(
    withExpectedVersion(body, parseIfMatch(headers.get("if-match"))),
    headers.get("fencing-token"),
  );
}

/**
 * The transition request: the body, with the version from If-Match and the
 * lease token from Fencing-Token when the body has none. Validated here only
 * to word the missing-version error for both ways of sending it; the engine
 * validates again and stays the authority.
 */
export function parseTransitionRequest(
  body: unknown,
  ifMatchHeader: string | null,
  fencingTokenHeader: string | null = null,
): TransitionInput {
  const merged = withFencingToken(withExpectedVersion(body, parseIfMatch(ifMatchHeader)), fencingTokenHeader);
  const parsed = TransitionInputSchema.safeParse(merged);
  if (parsed.success) return parsed.data;
  const versionMissing = isPlainObject(merged) && merged.expected_version === undefined;
  const errors = fieldErrorsFromZod(parsed.error.issues as Parameters<typeof fieldErrorsFromZod>[0]).map((e) =>
    versionMissing && e.field === "expected_version"
      ? {
          field: e.field,
          message: 'required: send the version you read as If-Match: "<version>" or as expected_version',
        }
      : e,
  );
  throw validationError(errors);
}

const fencingTokenField = z.string().regex(fencingTokenPattern, "must be the decimal fencing token of your lease");

/** Renew: the token (here or as Fencing-Token) and how long from now. */
export const LeaseRenewRequestSchema = LeaseRequestSchema.extend({ fencing_token: fencingTokenField.optional() });
/** Release: the token, here or as Fencing-Token. */
export const LeaseReleaseRequestSchema = z.strictObject({ fencing_token: fencingTokenField.optional() });

/**
 * A lease request that names its token: the body merged with Fencing-Token,
 * validated, and the token required (from one place or the other).
 */
export function parseLeaseTokenRequest<T extends { fencing_token?: string }>(
  schema: z.ZodType<T>,
  body: unknown,
  fencingTokenHeader: string | null,
): T & { fencing_token: string } {
  const parsed: T = parseInput(schema, withFencingToken(body, fencingTokenHeader));
  if (parsed.fencing_token === undefined) {
    throw validationError([
      {
        field: "fencing_token",
        message: "required: send the token of your lease as Fencing-Token: <token> or as fencing_token",
      },
    ]);
  }
  return { ...parsed, fencing_token: parsed.fencing_token };
}

export const TransitionLogQuerySchema = z.strictObject({
  after_version: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: "Only records with to_version greater than this; 0 or absent from the start." }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export function parseQuery<S extends z.ZodType>(schema: S, query: Record<string, string>): z.infer<S> {
  return parseInput(schema, query);
}

/** A 400 naming each offending field, for the shapes the API itself owns (the engine parses its own inputs). */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success)
    throw validationError(fieldErrorsFromZod(parsed.error.issues as Parameters<typeof fieldErrorsFromZod>[0]));
  return parsed.data;
}

/** The definition a task is pinned to, by digest (not by name: a newer version may exist). */
export function workflowOfTaskOrThrow(task: { id: string; workflow: { digest: string } }): WorkflowDefinition {
  const def = getWorkflowByDigest(task.workflow.digest);
  if (!def) {
    throw new AppError(
      "invariant_violated",
      `Task ${task.id} is pinned to workflow digest ${task.workflow.digest}, which this server does not have.`,
      {
        violations: [
          { invariant: "workflow_definition_available", message: `Unknown workflow digest ${task.workflow.digest}.` },
        ],
      },
    );
  }
  return def;
}
