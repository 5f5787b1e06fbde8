import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { z } from "zod";
import { dbFor, getPlatformDb } from "@/lib/db/client";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";
import { tenantOfOidcSubject, tenantOfUsername } from "@/lib/stores/users";
import { tenantOfConsoleSession } from "@/lib/stores/console-sessions";
import { getAuthSecret } from "@/lib/config/env";
import { childLogger } from "@/lib/config/log";
import { signInWithOidc, signInWithPassword, signOut } from "@/lib/adapters/auth/audit-trail";
import { oidcIdentityOf, oidcProviderId, oidcProviders } from "@/lib/adapters/auth/oidc";
import { sameOriginPath } from "@/lib/adapters/auth/callback-url";
import { checkSessionOncePerRequest } from "@/lib/adapters/auth/session-check";

const log = childLogger("auth");

/**
 * next-auth v4 with the credentials provider and a JWT session. Each sign-in
 * opens its own console_sessions row (in the transaction of its audit entry);
 * the token carries the user id and that row's id (`sid`), nothing else.
 * Whether the session still stands, and the person's role and name, are
 * re-read from the row and the users table on every request
 * (lib/adapters/auth/session-check.ts). next-auth's `maxAge` is the idle
 * expiry, renewed by each refresh; VERITY_SESSION_MAX_AGE_HOURS bounds a
 * session's whole life, from the row's created_at, which no refresh moves.
 * A token from before per-sign-in sessions has no `sid` and is refused: the
 * person signs in once more.
 */

/** Error codes the sign-in page turns into words (next-auth passes them as `?error=`). */
export const signInErrorCodes = {
  invalidCredentials: "CredentialsSignin",
  unavailable: "SignInUnavailable",
  /** Followed by `.` and the time to retry at, in milliseconds since the epoch. */
  throttled: "SignInThrottled",
} as const;

const CredentialsSchema = z.object({
  username: z.string().trim().min(1).max(128),
  password: z.string().min(1).max(1024),
});

const TokenClaimsSchema = z.object({
  sub: z.string().min(1),
  sid: z.string().min(1),
});

/**
 * The caller's address for the per-address throttle: the last hop of
 * X-Forwarded-For, which `next start` fills from the socket when absent and
 * a proxy in front appends to (the hop it saw). Without a proxy a client can
 * choose it; the per-username throttle does not depend on it.
 */
function addressOf(headers: unknown): string | null {
  const value = (headers as Record<string, string | undefined> | undefined)?.["x-forwarded-for"];
  const last = value?.split(",").at(-1)?.trim();
  return last ? last.slice(0, 64) : null;
}

class SessionEnded extends Error {}

let cached: NextAuthOptions | undefined;

/**
 * Built on first use, not at import: reading the secret may create it in the
 * data folder, which must never happen during `next build`.
 */
export function getAuthOptions(): NextAuthOptions {
  cached ??= {
    secret: getAuthSecret(),
    session: { strategy: "jwt", maxAge: 8 * 60 * 60 },
    pages: { signIn: "/login", error: "/login" },
    providers: [
      CredentialsProvider({
        id: "credentials",
        name: "Username and password",
        credentials: {
          username: { label: "Username", type: "text" },
          password: { label: "Password", type: "password" },
        },
        async authorize(raw, request) {
          const parsed = CredentialsSchema.safeParse(raw);
          if (!parsed.success) return null;
          let result;
          try {
            // Throttled and recorded in the audit log before next-auth issues a session.
            // The login name says which tenant; an unknown one is refused (and throttled) in the first tenant.
            const tenantId = (await tenantOfUsername(getPlatformDb(), parsed.data.username)) ?? DEFAULT_TENANT_ID;
            result = await signInWithPassword(dbFor({ tenantId }), {
              ...parsed.data,
              address: addressOf(request?.headers),
            });
          } catch (error) {
            // A database outage is not a wrong password: say so on the sign-in page.
            log.error({ err: error }, "sign-in: could not verify credentials");
            throw new Error(signInErrorCodes.unavailable);
          }
          switch (result.kind) {
            case "signed_in":
              return {
                id: result.principal.id,
                name: result.principal.displayName,
                sessionId: result.sessionId,
              };
            case "throttled":
              throw new Error(`${signInErrorCodes.throttled}.${result.retryAt.getTime()}`);
            case "invalid":
              return null;
          }
        },
      }),
      ...oidcProviders(),
    ],
    callbacks: {
      async signIn({ user, account, profile }) {
        if (account?.provider !== oidcProviderId) return true;
        const identity = oidcIdentityOf((profile ?? {}) as Record<string, unknown>);
        // No mapped role: refused (next-auth shows AccessDenied), recorded nowhere, like a wrong password.
        if (!identity) return false;
        // A subject seen before signs in to its person's tenant; a new one is created in the first tenant.
        const tenantId = (await tenantOfOidcSubject(getPlatformDb(), identity.subject)) ?? DEFAULT_TENANT_ID;
        const linked = await signInWithOidc(dbFor({ tenantId }), identity);
        if (!linked) return false;
        // next-auth hands this same object to the jwt callback below: from here on it is the Verity user.
        Object.assign(user, {
          id: linked.principal.id,
          name: linked.principal.displayName,
          sessionId: linked.sessionId,
        });
        return true;
      },
      async jwt({ token, user }) {
        if (user) {
          const { sessionId } = user as { sessionId?: string };
          // Both sign-in paths open a session row before next-auth gets here; without one there is no session.
          if (!sessionId) throw new SessionEnded("session without a console session row");
          return { sub: user.id, sid: sessionId };
        }
        const claims = TokenClaimsSchema.safeParse(token);
        // Thrown, next-auth answers an empty session and clears the cookie instead of renewing it.
        if (!claims.success) throw new SessionEnded("session token without its claims");
        // On the platform's connection: the session row says which tenant it is.
        const { standing } = await checkSessionOncePerRequest(getPlatformDb(), claims.data.sid, claims.data.sub);
        if (standing !== "valid") throw new SessionEnded(`session ${standing}`);
        return token;
      },
      session({ session, token }) {
        return {
          expires: session.expires,
          userId: token.sub,
          sessionId: token.sid,
        } as typeof session;
      },
      // Every redirect next-auth makes (after sign-in, sign-out, an error) stays on this site.
      redirect({ url, baseUrl }) {
        return `${baseUrl.replace(/\/$/, "")}${sameOriginPath(url, baseUrl)}`;
      },
    },
    events: {
      async signOut({ token }) {
        const claims = TokenClaimsSchema.safeParse(token);
        // A failure here leaves the saved cookie alive; next-auth would only log it, so say what it means.
        if (claims.success)
          await tenantOfConsoleSession(getPlatformDb(), claims.data.sid)
            .then((tenantId) =>
              tenantId
                ? signOut(dbFor({ tenantId }), { sessionId: claims.data.sid, userId: claims.data.sub })
                : undefined,
            )
            .catch((error: unknown) =>
              log.error({ err: error, sessionId: claims.data.sid }, "sign-out: could not end the session"),
            );
      },
    },
    logger: {
      error(code, metadata) {
        // An ended session is the expected answer to a stale cookie, not an error worth a stack trace.
        const cause = (metadata as { message?: string } | undefined)?.message ?? "";
        if (code === "JWT_SESSION_ERROR" && cause.startsWith("session ")) return;
        log.error({ code, metadata }, "next-auth error");
      },
      warn(code) {
        log.warn({ code }, "next-auth warning");
      },
      debug() {},
    },
  };
  return cached;
}
