import { z } from "zod";
import { authenticateApiToken } from "@/lib/auth/api-tokens";
import { requirePermission, type Permission, type Principal } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db";
import { TransitionInputSchema, type TransitionInput } from "@/lib/engine/tasks";
import { getWorkflowByDigest } from "@/lib/engine/workflows";
import type { WorkflowDefinition } from "@/lib/engine/workflow-definition";
import { getEnv } from "@/lib/env";
import { AppError, fieldErrorsFromZod } from "@/lib/errors";
import { authenticateBearer } from "@/lib/http/bearer";
import { isPlainObject, readJsonBody } from "@/lib/http/body";
import { parseIfMatch, withExpectedVersion } from "@/lib/http/preconditions";
import { validationError } from "@/lib/http/problem";

/**
 * The app-specific glue between the generic lib/http helpers and Verity:
 * which database authenticates tokens, which limit applies to bodies, and the
 * request parsing the engine's own schemas need a little help with.
 */

/** 401 without a valid bearer token, 403 without the permission. */
export async function requireApiPrincipal(request: Request, permission: Permission): Promise<Principal> {
  const principal = await authenticateBearer(request, (token) => authenticateApiToken(getDb(), token));
  return requirePermission(principal, permission);
}

export function readApiJson(request: Request): Promise<unknown> {
  return readJsonBody(request, { maxBytes: getEnv().VERITY_MAX_BODY_BYTES });
}

/**
 * The transition request: the body, with the version from If-Match when the
 * body has none. Validated here only to word the missing-version error for
 * both ways of sending it; the engine validates again and stays the authority.
 */
export function parseTransitionRequest(body: unknown, ifMatchHeader: string | null): TransitionInput {
  const merged = withExpectedVersion(body, parseIfMatch(ifMatchHeader));
  const parsed = TransitionInputSchema.safeParse(merged);
  if (parsed.success) return parsed.data;
  const versionMissing = isPlainObject(merged) && merged.expected_version === undefined;
  const errors = fieldErrorsFromZod(parsed.error.issues as Parameters<typeof fieldErrorsFromZod>[0]).map((e) =>
    versionMissing && e.field === "expected_version"
      ? { field: e.field, message: 'required: send the version you read as If-Match: "<version>" or as expected_version' }
      : e,
  );
  throw validationError(errors);
}

export const TransitionLogQuerySchema = z.strictObject({
  after_version: z.coerce.number().int().min(0).optional().meta({ description: "Only records with to_version greater than this; 0 or absent from the start." }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export function parseQuery<S extends z.ZodType>(schema: S, query: Record<string, string>): z.infer<S> {
  const parsed = schema.safeParse(query);
  if (!parsed.success) throw validationError(fieldErrorsFromZod(parsed.error.issues as Parameters<typeof fieldErrorsFromZod>[0]));
  return parsed.data;
}

/** The definition a task is pinned to, by digest (not by name: a newer version may exist). */
export function workflowOfTaskOrThrow(task: { id: string; workflow: { digest: string } }): WorkflowDefinition {
  const def = getWorkflowByDigest(task.workflow.digest);
  if (!def) {
    throw new AppError("invariant_violated", `Task ${task.id} is pinned to workflow digest ${task.workflow.digest}, which this server does not have.`, {
      violations: [{ invariant: "workflow_definition_available", message: `Unknown workflow digest ${task.workflow.digest}.` }],
    });
  }
  return def;
}
