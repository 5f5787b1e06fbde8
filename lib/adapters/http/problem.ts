/**
 * HTTP helpers for the agent API (lib/adapters/http): plain functions over the
 * web-standard Request and Response, with no Next.js imports, so every route
 * (and a test) can use them as they are.
 *
 *   problem.ts       errors → application/problem+json (this file)
 *   body.ts          JSON request bodies: media type, byte limit, parse
 *   preconditions.ts ETag / If-Match / If-None-Match ↔ task versions
 *   bearer.ts        the Authorization header → a bearer token
 *   query.ts         URL search parameters → a plain object for zod
 *   respond.ts       JSON success responses, and `withProblems`, the one
 *                    try/catch every route handler runs inside
 *
 * ## The error format
 *
 * Every error response is RFC 9457 problem details, `Content-Type:
 * application/problem+json`:
 *
 *   {
 *     "type": "https://verity.dev/problems/version-conflict",
 *     "title": "It changed since you read it",
 *     "status": 409,
 *     "detail": "Expected version 3, but the task is at version 4 (RUNNING). …",
 *     "instance": "/api/v1/tasks/task_01k…/transitions",
 *     "current_version": 4,
 *     "current_status": "RUNNING"
 *   }
 *
 * `type` is stable and is what clients branch on; its last segment is the
 * AppErrorCode with dashes (validation-failed, unauthenticated, forbidden,
 * not-found, version-conflict, idempotency-conflict, invariant-violated,
 * payload-too-large, unsupported-media-type, internal-error). `title` is fixed
 * per type; `detail` is this occurrence in words; `instance` is the request
 * path. Extensions, by type:
 *
 *   400 validation-failed    errors: [{ field, message }] — `field` is the JSON
 *                            path of the offending member (`patch.gates.plan_approved`),
 *                            "" for the body as a whole (malformed JSON), or the
 *                            header name for a bad header (`If-Match`, `Content-Type`).
 *                            An unknown field is named itself (`patch.gates.bogus`).
 *   401 unauthenticated      `WWW-Authenticate: Bearer realm="verity"` header
 *                            (with error="invalid_token" when a token was sent but not accepted)
 *   403 forbidden            permission, or violations when the actor may not take an edge
 *   409 version-conflict     current_version, current_status; `ETag` of the current version
 *   409 idempotency-conflict the id was used before with a different request
 *   413 payload-too-large    max_bytes
 *   422 invariant-violated   violations: [{ invariant, message }]
 *   422 definition-invalid   problems: [{ path, code, message }] — every problem of a published
 *                            definition at its JSON path (`$.transitions[3].to`), and the
 *                            same as errors: [{ field, message }]
 *   500 internal-error       request_id only: the cause is logged on the server, never sent
 */
import { AppError, httpStatusByCode, titleByCode, type AppErrorCode, type FieldError } from "@/lib/core/errors";
import { childLogger } from "@/lib/config/log";

const httpLog = childLogger("http");

export const PROBLEM_CONTENT_TYPE = "application/problem+json";
export const PROBLEM_TYPE_BASE = "https://verity.dev/problems/";
const BEARER_REALM = 'Bearer realm="verity"';

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [extension: string]: unknown;
}

export function problemTypeOf(code: AppErrorCode | "internal_error"): string {
  return PROBLEM_TYPE_BASE + code.replaceAll("_", "-");
}

/** A 400 naming each offending field; the detail repeats them for people reading logs. */
export function validationError(errors: FieldError[]): AppError {
  return new AppError(
    "validation_failed",
    errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join("; "),
    { errors },
  );
}

/**
 * Details that steer response headers rather than the body. `bearerError` is
 * RFC 6750's `error` attribute of WWW-Authenticate.
 */
const headerOnlyDetails = new Set(["bearerError"]);

function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

export function problemFromAppError(error: AppError, instance?: string): ProblemDetails {
  const extensions: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error.details)) {
    if (value !== undefined && !headerOnlyDetails.has(key)) extensions[snakeCase(key)] = value;
  }
  return {
    ...extensions,
    type: problemTypeOf(error.code),
    title: titleByCode[error.code],
    status: httpStatusByCode[error.code],
    detail: error.message,
    ...(instance ? { instance } : {}),
  };
}

export function problemJson(problem: ProblemDetails, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  h.set("Content-Type", PROBLEM_CONTENT_TYPE);
  h.set("Cache-Control", "no-store");
  return new Response(JSON.stringify(problem), { status: problem.status, headers: h });
}

export function appErrorResponse(error: AppError, instance?: string): Response {
  const headers = new Headers();
  if (error.code === "unauthenticated") {
    const bearerError = error.details.bearerError;
    headers.set(
      "WWW-Authenticate",
      typeof bearerError === "string" ? `${BEARER_REALM}, error="${bearerError}"` : BEARER_REALM,
    );
  }
  if (error.code === "version_conflict" && typeof error.details.currentVersion === "number") {
    headers.set("ETag", `"${error.details.currentVersion}"`);
  }
  return problemJson(problemFromAppError(error, instance), headers);
}

/**
 * Any thrown value as a problem response. AppErrors say what went wrong in
 * domain terms; anything else is a bug or an outage: logged here with a
 * request id, answered with that id and nothing of the cause (messages of
 * driver errors can carry SQL or data).
 */
export function problemResponse(error: unknown, request: Pick<Request, "method" | "url">): Response {
  const instance = pathOf(request.url);
  if (error instanceof AppError) return appErrorResponse(error, instance);
  const requestId = crypto.randomUUID();
  logUnexpected(error, { requestId, method: request.method, path: instance });
  return problemJson({
    type: problemTypeOf("internal_error"),
    title: "Internal server error",
    status: 500,
    detail: `The server failed to handle this request. Quote request id ${requestId} when reporting it.`,
    instance,
    request_id: requestId,
  });
}

/**
 * One log line per unexpected error (lib/config/log.ts redacts secrets in it). Only method and path are logged, never
 * headers (Authorization carries the bearer token) nor the query or body.
 */
export function logUnexpected(error: unknown, context: { requestId: string; method: string; path: string }): void {
  httpLog.error(
    { err: error, request_id: context.requestId, method: context.method, path: context.path },
    "unhandled error in API route",
  );
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return "";
  }
}
