import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import { connection } from "next/server";
import { cache } from "react";
import { z } from "zod";
import { getAuthOptions } from "@/lib/adapters/auth/next-auth-options";
import { recordPermissionDenied, requirePermissionRecorded } from "@/lib/adapters/auth/audit-trail";
import { can, type Permission, type Principal } from "@/lib/model/permissions";
import { getDb } from "@/lib/db/client";
import { sameOriginPath } from "@/lib/adapters/auth/callback-url";
import { checkSessionOncePerRequest } from "@/lib/adapters/auth/session-check";

const SessionSchema = z.object({
  userId: z.string().min(1),
  sessionId: z.string().min(1),
});

/**
 * The signed-in person, re-read from the database for this request (cached
 * for the rest of it). Null when there is no valid session: none, a user
 * gone or disabled, this session ended (its sign-out, or an administrator's
 * change ending all of the person's), or past the absolute lifetime. The
 * check next-auth's jwt callback made for getServerSession is the same one,
 * made once (checkSessionOncePerRequest).
 */
export const getSessionPrincipal = cache(async (): Promise<Principal | null> => {
  // Marks the render as per-request before anything reads the auth secret:
  // `next build` must neither prerender a signed-in page nor create the secret.
  await connection();
  const session = SessionSchema.safeParse(await getServerSession(getAuthOptions()));
  if (!session.success) return null;
  const { principal } = await checkSessionOncePerRequest(getDb(), session.data.sessionId, session.data.userId);
  return principal?.kind === "user" ? principal : null;
});

export function loginPath(returnTo: string): string {
  return `/login?callbackUrl=${encodeURIComponent(sameOriginPath(returnTo))}`;
}

export type PageAccess = { ok: true; principal: Principal } | { ok: false; principal: Principal; reason: string };

/**
 * The check at the top of every console page: no session redirects to the
 * sign-in page (and back here afterwards); a role without the permission gets
 * the reason in words, rendered by the page.
 */
export async function authorizePage(permission: Permission, returnTo: string): Promise<PageAccess> {
  const principal = await getSessionPrincipal();
  if (!principal) redirect(loginPath(returnTo));
  if (!can(principal, permission)) {
    await recordPermissionDenied(getDb(), principal, permission, `page ${sameOriginPath(returnTo)}`);
    return {
      ok: false,
      principal,
      reason: `Your role (${principal.role}) does not include the ${permission} permission.`,
    };
  }
  return { ok: true, principal };
}

/**
 * The check at the top of a server action: the signed-in person with the
 * permission, or the AppError to show; a refusal is recorded in the audit log.
 */
export async function requireSessionPermission(permission: Permission, where: string): Promise<Principal> {
  return requirePermissionRecorded(getDb(), await getSessionPrincipal(), permission, where);
}
