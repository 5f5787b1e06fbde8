import { getSessionPrincipal } from "@/lib/adapters/auth/session";
import { requirePermissionRecorded } from "@/lib/adapters/auth/audit-trail";
import type { Permission, Principal } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { requireApiPrincipal } from "@/lib/adapters/api/context";

/**
 * For the few API routes people use as well as agents (checkpoints: an
 * engineer restores one, from the console or a script): a bearer token when
 * the request carries Authorization, else the console's session cookie.
 *
 * A cookie travels with requests other sites make, so a write authenticated
 * by it must come from this site: the browser's Origin header, sent with
 * every cross-site POST, must name this host. (The session cookie is also
 * SameSite=Lax, and a JSON body cannot be sent cross-site without a CORS
 * preflight this server never answers; this check does not rely on either.)
 */
export async function requireApiOrSessionPrincipal(request: Request, permission: Permission): Promise<Principal> {
  if (request.headers.get("authorization") !== null) return requireApiPrincipal(request, permission);
  const principal = await getSessionPrincipal();
  if (!principal)
    throw new AppError(
      "unauthenticated",
      "Send an API token (Authorization: Bearer <token>) or sign in to the console.",
    );
  if (!["GET", "HEAD"].includes(request.method)) assertSameOrigin(request);
  return requirePermissionRecorded(
    dbFor(principal),
    principal,
    permission,
    `${request.method} ${new URL(request.url).pathname}`,
  );
}

function assertSameOrigin(request: Request): void {
  const origin = request.headers.get("origin");
  if (origin === null) return;
  const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
  let originHost: string | null = null;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = null;
  }
  if (!host || originHost !== host) {
    throw new AppError(
      "forbidden",
      "A request authenticated by the console session must come from the console's own origin.",
    );
  }
}
