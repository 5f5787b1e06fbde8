import type { FieldError } from "@/lib/core/errors";
import type { ProblemDetails } from "@/lib/adapters/http/problem";

/**
 * How the console's client components read its JSON routes
 * (`/api/console/*`). No server imports: this runs in the browser. Every
 * error those routes answer is RFC 9457 problem+json, as the agent API's
 * are; its `detail` is the sentence the UI shows, so a refusal reads "Your
 * role (operator) does not include audit:read." rather than "HTTP 403".
 */

/** A route's refusal, as its problem said it. A network failure is not one: fetch's own TypeError passes through. */
export class ConsoleRouteError extends Error {
  constructor(
    readonly status: number,
    /** The problem's `detail`, or what can be said without one. */
    message: string,
    /** The problem's `type`; null when the answer was not problem+json (a proxy's error page). */
    readonly type: string | null = null,
    /** validation-failed's field errors, each already in words. */
    readonly fieldErrors: FieldError[] = [],
  ) {
    super(message);
    this.name = "ConsoleRouteError";
  }

  /** 401: the session ended; reloading leads to the sign-in page. */
  get sessionEnded(): boolean {
    return this.status === 401;
  }
}

function isFieldError(value: unknown): value is FieldError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as FieldError).field === "string" &&
    typeof (value as FieldError).message === "string"
  );
}

/** The error a non-2xx answer stands for, read from its problem+json body when it has one. */
export async function routeErrorOf(response: Response): Promise<ConsoleRouteError> {
  const fallback = `The server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}.`;
  if (!response.headers.get("Content-Type")?.includes("application/problem+json"))
    return new ConsoleRouteError(response.status, fallback);
  const body = (await response.json().catch(() => null)) as Partial<ProblemDetails> | null;
  const detail = typeof body?.detail === "string" && body.detail ? body.detail : fallback;
  const errors = Array.isArray(body?.errors) ? body.errors.filter(isFieldError) : [];
  return new ConsoleRouteError(response.status, detail, typeof body?.type === "string" ? body.type : null, errors);
}

/** GETs a console route's JSON, never from a cache; a refusal throws ConsoleRouteError. */
export async function fetchConsoleJson<T>(url: string, options: { signal?: AbortSignal } = {}): Promise<T> {
  const response = await fetch(url, {
    cache: "no-store",
    signal: options.signal,
    headers: { Accept: "application/json, application/problem+json" },
  });
  if (!response.ok) throw await routeErrorOf(response);
  return (await response.json()) as T;
}
