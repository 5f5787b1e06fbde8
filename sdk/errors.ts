/**
 * The SDK's two failures. VerityApiError: the server answered with an RFC
 * 9457 problem (it decided; retrying the same request gets the same answer).
 * VerityNetworkError: no answer after every retry (the request may or may
 * not have been applied; every SDK request is safe to send again).
 */

export const PROBLEM_TYPE_BASE = "https://verity.dev/problems/";

export interface FieldError {
  field: string;
  message: string;
}

export interface InvariantViolation {
  invariant: string;
  message: string;
}

/** The problem+json body, as the server sends it (snake_case extensions). */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: FieldError[];
  violations?: InvariantViolation[];
  current_version?: number;
  current_status?: string;
  execution_id?: string;
  request_id?: string;
  [extension: string]: unknown;
}

export class VerityApiError extends Error {
  override name = "VerityApiError";
  readonly status: number;
  /** The full problem type URI; `code` is its last segment in snake_case. */
  readonly type: string;
  /** version_conflict, lease_conflict, invariant_violated, … or `http_<status>` for a non-problem answer. */
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  readonly errors: FieldError[];
  readonly violations: InvariantViolation[];
  /** 409 version-conflict: the version to read and retry from. */
  readonly currentVersion: number | undefined;
  readonly currentStatus: string | undefined;
  readonly requestId: string | undefined;
  readonly problem: ProblemBody;

  constructor(problem: ProblemBody) {
    super(`${problem.status} ${problem.title}: ${problem.detail}`);
    this.problem = problem;
    this.status = problem.status;
    this.type = problem.type;
    this.code = codeOfType(problem.type, problem.status);
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.violations = problem.violations ?? [];
    this.currentVersion = problem.current_version;
    this.currentStatus = problem.current_status;
    this.requestId = problem.request_id;
  }

  /** True when the problem names this invariant (e.g. unknown_outcome_reconciled_before_retry). */
  hasInvariant(invariant: string): boolean {
    return this.violations.some((v) => v.invariant === invariant);
  }
}

export class VerityNetworkError extends Error {
  override name = "VerityNetworkError";
  constructor(
    message: string,
    readonly attempts: number,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

export function isVerityApiError(error: unknown, code?: string): error is VerityApiError {
  return error instanceof VerityApiError && (code === undefined || error.code === code);
}

function codeOfType(type: string, status: number): string {
  return type.startsWith(PROBLEM_TYPE_BASE)
    ? type.slice(PROBLEM_TYPE_BASE.length).replaceAll("-", "_")
    : `http_${status}`;
}

/**
 * A non-2xx answer as a VerityApiError. A body that is not a problem (a
 * proxy's HTML 502, an empty 503) still becomes one, typed by its status, so
 * callers branch on one error type.
 */
export function apiErrorOf(status: number, contentType: string | null, text: string): VerityApiError {
  const problem = parseProblem(contentType, text);
  if (problem) return new VerityApiError({ ...problem, status });
  return new VerityApiError({
    type: "about:blank",
    title: `HTTP ${status}`,
    status,
    detail:
      text.trim() === ""
        ? "The server answered without a body."
        : `The server answered with a non-problem body: ${text.slice(0, 200)}`,
  });
}

/** The problem in a response body, or null when it is not application/problem+json with the required members. */
export function parseProblem(contentType: string | null, text: string): ProblemBody | null {
  const mediaType = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/problem+json") return null;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const b = body as Record<string, unknown>;
  if (
    typeof b.type !== "string" ||
    typeof b.title !== "string" ||
    typeof b.status !== "number" ||
    typeof b.detail !== "string"
  )
    return null;
  return {
    ...b,
    type: b.type,
    title: b.title,
    status: b.status,
    detail: b.detail,
    errors: Array.isArray(b.errors) ? b.errors.filter(isFieldError) : undefined,
    violations: Array.isArray(b.violations) ? b.violations.filter(isViolation) : undefined,
    current_version: typeof b.current_version === "number" ? b.current_version : undefined,
    current_status: typeof b.current_status === "string" ? b.current_status : undefined,
  };
}

function isFieldError(v: unknown): v is FieldError {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as FieldError).field === "string" &&
    typeof (v as FieldError).message === "string"
  );
}

function isViolation(v: unknown): v is InvariantViolation {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as InvariantViolation).invariant === "string" &&
    typeof (v as InvariantViolation).message === "string"
  );
}

/** Answers that say nothing about the request (a gateway or an overloaded server): the same request may be sent again. */
export function isRetryableStatus(status: number): boolean {
  return status === 502 || status === 503 || status === 504;
}
