import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { z } from "zod";
import { getDb } from "@/lib/db/client";
import { getAuthSecret } from "@/lib/config/env";
import { childLogger } from "@/lib/config/log";
import { signInWithPassword } from "@/lib/adapters/auth/audit-trail";

const log = childLogger("auth");

/**
 * next-auth v4 with the credentials provider and a JWT session. The token
 * carries only the user id: role and name are re-read from the users table on
 * every request (lib/adapters/auth/session.ts), so a changed role or a removed user
 * takes effect at once instead of when the token expires.
 */

/** Error codes the sign-in page turns into words (next-auth passes them as `?error=`). */
export const signInErrorCodes = {
  invalidCredentials: "CredentialsSignin",
  unavailable: "SignInUnavailable",
} as const;

const CredentialsSchema = z.object({
  username: z.string().trim().min(1).max(128),
  password: z.string().min(1).max(1024),
});

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
        async authorize(raw) {
          const parsed = CredentialsSchema.safeParse(raw);
          if (!parsed.success) return null;
          let principal;
          try {
            // Recorded in the audit log, success or failure, before next-auth issues a session.
            principal = await signInWithPassword(getDb(), parsed.data.username, parsed.data.password);
          } catch (error) {
            // A database outage is not a wrong password: say so on the sign-in page.
            log.error({ err: error }, "sign-in: could not verify credentials");
            throw new Error(signInErrorCodes.unavailable);
          }
          return principal ? { id: principal.id, name: principal.displayName } : null;
        },
      }),
    ],
    callbacks: {
      jwt({ token, user }) {
        if (user) token.sub = user.id;
        return token;
      },
      session({ session, token }) {
        return { expires: session.expires, userId: token.sub } as typeof session;
      },
    },
  };
  return cached;
}
