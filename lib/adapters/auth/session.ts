import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import { connection } from "next/server";
import { cache } from "react";
import { z } from "zod";
import { getAuthOptions } from "@/lib/adapters/auth/next-auth-options";
import { recordPermissionDenied, requirePermissionRecorded } from "@/lib/adapters/auth/audit-trail";
import { can, refusalReason, type Permission, type Principal } from "@/lib/model/permissions";
import { dbFor, getPlatformDb, type Db } from "@/lib/db/client";
import { requireActiveTenant } from "@/lib/adapters/auth/tenant-standing";
import { sameOriginPath } from "@/lib/adapters/auth/callback-url";
import { checkSessionOncePerRequest } from "@/lib/adapters/auth/session-check";
import { AppError } from "@/lib/core/errors";

const SessionSchema = z.object({
  userId: z.string().min(1),
  sessionId: z.string().min(1),
});

/** Where a person with a one-time password is sent, and the only console page they may open. */
export const accountPath = "/account";

export const passwordMustChangeMessage =
  "Your password is a one-time password: choose your own under Account (/account) first.";

export type ConsoleSession = { principal: Principal; sessionId: string; passwordMustChange: boolean };

/**
 * This request's console session, re-read from the database (cached for the
 * rest of the request). Null when there is no valid session: none, a user
 * gone or disabled, this session ended (its sign-out, or a change ending all
 * of the person's), or past the absolute lifetime. The check next-auth's jwt
 * callback made for getServerSession is the same one, made once
 * (checkSessionOncePerRequest). Only the account page and its action read
 * this directly: they are what a person holding a one-time password may use.
 */
export const getConsoleSession = cache(async (): Promise<ConsoleSession | null> => {
  // Marks the render as per-request before anything reads the auth secret:
  // `next build` must neither prerender a signed-in page nor create the secret.
  await connection();
  const session = SessionSchema.safeParse(await getServerSession(getAuthOptions()));
  if (!session.success) return null;
  // On the platform's connection: the session row says which tenant; from here on, that tenant's client.
  const { principal, passwordMustChange } = await checkSessionOncePerRequest(
    getPlatformDb(),
    session.data.sessionId,
    session.data.userId,
  );
  if (principal?.kind !== "user") return null;
  await requireActiveTenant(principal);
  return { principal, sessionId: session.data.sessionId, passwordMustChange };
});

/**
 * The signed-in person, for everything but /account. Null as well while the
 * person still holds a one-time password (users.password_must_change): every
 * page (authorizePage sends them to /account), server action
 * (requireSessionPermission says why), console JSON route and session-auth
 * API route passes here, so none of them serves a password someone else
 * has read. Bearer tokens never do: agents are not people.
 */
export const getSessionPrincipal = cache(async (): Promise<Principal | null> => {
  const session = await getConsoleSession();
  return session && !session.passwordMustChange ? session.principal : null;
});

export function loginPath(returnTo: string): string {
  return `/login?callbackUrl=${encodeURIComponent(sameOriginPath(returnTo))}`;
}

export type PageAccess = { ok: true; principal: Principal } | { ok: false; principal: Principal; reason: string };

/**
 * The signed-in person's tenant client: what every console page, server
 * component and server action reads and writes through, so that nothing
 * they do can reach another tenant's rows (row-level security, docs/tenants.md).
 */
export async function consoleDb(): Promise<Db> {
  const principal = (await getConsoleSession())?.principal;
  if (!principal) throw new AppError("unauthenticated", "Sign in to the console.");
  return dbFor(principal);
}

/**
 * The check at the top of every console page: no session redirects to the
 * sign-in page (and back here afterwards); a role without the permission gets
 * the reason in words, rendered by the page.
 */
export async function authorizePage(permission: Permission, returnTo: string): Promise<PageAccess> {
  const session = await getConsoleSession();
  if (!session) redirect(loginPath(returnTo));
  if (session.passwordMustChange) redirect(accountPath);
  const { principal } = session;
  if (!can(principal, permission)) {
    await recordPermissionDenied(dbFor(principal), principal, permission, `page ${sameOriginPath(returnTo)}`);
    return {
      ok: false,
      principal,
      reason: refusalReason(principal, permission),
    };
  }
  return { ok: true, principal };
}

/**
 * The check at the top of a server action: the signed-in person with the
 * permission, or the AppError to show; a refusal is recorded in the audit log.
 */
export async function requireSessionPermission(permission: Permission, where: string): Promise<Principal> {
  if ((await getConsoleSession())?.passwordMustChange) throw new AppError("forbidden", passwordMustChangeMessage);
  const principal = await getSessionPrincipal();
  return requirePermissionRecorded(principal ? dbFor(principal) : getPlatformDb(), principal, permission, where);
}
