import type { Provider } from "next-auth/providers/index";
import { getEnv } from "@/lib/config/env";
import { parseOidcRoleMap, roleFromClaims, type OidcRoleMap } from "@/lib/model/auth/oidc-role";
import type { Role } from "@/lib/model/permissions";

/**
 * Single sign-on: next-auth's OpenID Connect provider, configured by
 * VERITY_OIDC_* (lib/config/env.ts). Off unless VERITY_OIDC_ISSUER is set;
 * set, a missing client id, secret or role map fails at first use, saying
 * which.
 */

export const oidcProviderId = "oidc";

type OidcConfig = { issuer: string; clientId: string; clientSecret: string; roleClaim: string; roleMap: OidcRoleMap };

function oidcConfig(): OidcConfig | null {
  const env = getEnv();
  if (!env.VERITY_OIDC_ISSUER) return null;
  const missing = (["VERITY_OIDC_CLIENT_ID", "VERITY_OIDC_CLIENT_SECRET", "VERITY_OIDC_ROLE_MAP"] as const).filter(
    (name) => !env[name],
  );
  if (missing.length > 0)
    throw new Error(`Invalid configuration:\n  VERITY_OIDC_ISSUER is set, so ${missing.join(", ")} must be too`);
  const parsed = parseOidcRoleMap(env.VERITY_OIDC_ROLE_MAP!);
  if (!parsed.ok) throw new Error(`Invalid configuration:\n  VERITY_OIDC_ROLE_MAP: ${parsed.reason}`);
  return {
    issuer: env.VERITY_OIDC_ISSUER.replace(/\/$/, ""),
    clientId: env.VERITY_OIDC_CLIENT_ID!,
    clientSecret: env.VERITY_OIDC_CLIENT_SECRET!,
    roleClaim: env.VERITY_OIDC_ROLE_CLAIM,
    roleMap: parsed.map,
  };
}

export function isOidcConfigured(): boolean {
  return Boolean(getEnv().VERITY_OIDC_ISSUER);
}

export function oidcProviders(): Provider[] {
  const config = oidcConfig();
  if (!config) return [];
  return [
    {
      id: oidcProviderId,
      name: "Single sign-on",
      type: "oauth",
      wellKnown: `${config.issuer}/.well-known/openid-configuration`,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      authorization: { params: { scope: "openid profile email" } },
      idToken: true,
      checks: ["pkce", "state"],
      // The claims are the ID token's and the userinfo endpoint's together.
      // OpenID Connect Core 5.4 has a provider return the profile and email
      // scopes' claims (where a groups claim usually rides) from userinfo
      // rather than in the ID token whenever it issues an access token, as in
      // this code flow; reading the ID token alone refused everyone at such a
      // provider. Where both name a claim the ID token's signed value wins;
      // openid-client's userinfo() checks that its subject is the ID token's.
      userinfo: {
        async request({ tokens, client }) {
          // next-auth types the tokens as plain parameters; they are openid-client's TokenSet (core/lib/oauth/callback.js).
          const tokenSet = tokens as Exclude<Parameters<typeof client.userinfo>[0], string>;
          const fromIdToken = tokenSet.claims();
          if (!client.issuer.metadata.userinfo_endpoint) return fromIdToken;
          return { ...(await client.userinfo(tokenSet)), ...fromIdToken };
        },
      },
      profile(profile: Record<string, unknown>) {
        return { id: String(profile.sub), name: typeof profile.name === "string" ? profile.name : null };
      },
    },
  ];
}

/** Who the provider says signed in, and the Verity role that maps to; null when nothing maps (refused). */
export function oidcIdentityOf(
  claims: Record<string, unknown>,
): { subject: string; username: string; displayName: string; role: Role } | null {
  const config = oidcConfig();
  const subject = typeof claims.sub === "string" ? claims.sub : null;
  if (!config || !subject) return null;
  const role = roleFromClaims(claims, config.roleClaim, config.roleMap);
  if (!role) return null;
  const text = (key: string) => (typeof claims[key] === "string" && claims[key] ? (claims[key] as string) : null);
  const username = (text("preferred_username") ?? text("email") ?? subject).slice(0, 128);
  return { subject: `${config.issuer}#${subject}`, username, displayName: text("name") ?? username, role };
}
