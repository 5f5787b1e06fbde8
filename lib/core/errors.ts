/**
 * The one error type of the domain. Route handlers map it to
 * application/problem+json, server actions to a message in words; the code
 * decides the HTTP status in one table.
 */
export type AppErrorCode =
  | "validation_failed"
  /** A well-formed document (a workflow or tool definition) that breaks the format's rules: every problem at its JSON path. */
  | "definition_invalid"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "version_conflict"
  | "lease_conflict"
  | "idempotency_conflict"
  | "invariant_violated"
  | "payload_too_large"
  | "unsupported_media_type"
  /** The key provider cannot give the key a sealed value needs (lib/config/keyring.ts): never answered with plaintext or a guess. */
  | "key_unavailable";

export const httpStatusByCode: Record<AppErrorCode, number> = {
  validation_failed: 400,
  definition_invalid: 422,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  version_conflict: 409,
  lease_conflict: 409,
  idempotency_conflict: 409,
  invariant_violated: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  key_unavailable: 503,
};

export const titleByCode: Record<AppErrorCode, string> = {
  validation_failed: "The request is invalid",
  definition_invalid: "The definition is invalid",
  unauthenticated: "Authentication required",
  forbidden: "Not allowed",
  not_found: "Not found",
  // One title for the type (RFC 9457: the detail names the task, review, alert or policy and says what changed).
  version_conflict: "It changed since you read it",
  lease_conflict: "Another worker holds this task's lease",
  idempotency_conflict: "This id was already used for a different request",
  invariant_violated: "The change would break an invariant",
  payload_too_large: "The request body is too large",
  unsupported_media_type: "Unsupported media type",
  key_unavailable: "An encryption key is not available",
};

export interface FieldError {
  /** JSON path of the offending field, e.g. `patch.gates.plan_approved`; "" for the whole body. */
  field: string;
  message: string;
}

export interface InvariantViolation {
  invariant: string;
  message: string;
}

export interface AppErrorDetails {
  errors?: FieldError[];
  violations?: InvariantViolation[];
  currentVersion?: number;
  [key: string]: unknown;
}

export class AppError extends Error {
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly details: AppErrorDetails = {},
  ) {
    super(message);
    this.name = "AppError";
  }

  get status(): number {
    return httpStatusByCode[this.code];
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** zod issues as field errors, with dotted paths a person can read. */
export function fieldErrorsFromZod(
  issues: ReadonlyArray<{ path: PropertyKey[]; message: string; code?: string; keys?: string[] }>,
): FieldError[] {
  return issues.flatMap((issue) => {
    const base = issue.path.map(String).join(".");
    // zod reports all unknown keys in one issue; name each of them as a field.
    if (issue.code === "unrecognized_keys" && issue.keys?.length) {
      return issue.keys.map((key) => ({
        field: base ? `${base}.${key}` : key,
        message: "unknown field: the schema is fixed",
      }));
    }
    return [{ field: base, message: issue.message }];
  });
}
