import { getSessionPrincipal } from "@/lib/auth/session";
import { can, type Permission, type Principal } from "@/lib/auth/permissions";

/**
 * The console's own small JSON routes (polled for live refresh) use the
 * browser session, not bearer tokens. Answers are never cached: they exist to
 * say what changed.
 */
export const noStore = { "Cache-Control": "no-store" } as const;

export async function sessionPrincipalOrResponse(permission: Permission): Promise<Principal | Response> {
  const principal = await getSessionPrincipal();
  if (!principal) return Response.json({ error: "Sign in again." }, { status: 401, headers: noStore });
  if (!can(principal, permission)) {
    return Response.json({ error: `Your role (${principal.role}) does not include ${permission}.` }, { status: 403, headers: noStore });
  }
  return principal;
}
