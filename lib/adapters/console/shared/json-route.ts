import { getSessionPrincipal } from "@/lib/adapters/auth/session";
import { can, type Permission, type Principal } from "@/lib/model/permissions";
import { AppError } from "@/lib/core/errors";

/**
 * The console's own small JSON routes (`/api/console/*`, polled for live
 * refresh) use the browser session, not bearer tokens. They answer like the
 * agent API: successes through `json` (never cached: they exist to say what
 * changed), every error as RFC 9457 problem+json through `withProblems`
 * (lib/adapters/http/respond.ts), so the console reads one error shape
 * (lib/adapters/console/shared/console-fetch.ts) and says why in its `detail`.
 *
 * Refusals here are not recorded in the audit log, on purpose: a page polls
 * these every few seconds, and the page itself recorded the refusal when it
 * was opened (docs/audit.md).
 */
export async function requireConsoleSession(permission: Permission): Promise<Principal> {
  const principal = await getSessionPrincipal();
  if (!principal) throw new AppError("unauthenticated", "Your session has ended: sign in again.");
  if (!can(principal, permission))
    throw new AppError("forbidden", `Your role (${principal.role}) does not include ${permission}.`, { permission });
  return principal;
}

/** A 404 for the thing a console route is about: "Task task_1 does not exist." */
export function notFound(what: string, id: string): AppError {
  return new AppError("not_found", `${what} ${id} does not exist.`);
}
