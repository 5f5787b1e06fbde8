/**
 * The test identity provider's client and people (e2e/oidc/provider.ts), and
 * the role map the "real deployment" server is configured with
 * (playwright.config.ts). The specs sign in as these people through the
 * provider's own pages; the groups claim is what Verity maps to a role.
 */

export const oidcClient = {
  id: "verity-e2e",
  // A confidential client: next-auth sends it with client_secret_basic at the token endpoint.
  secret: "verity-e2e-oidc-client-secret-not-for-production",
} as const;

/** VERITY_OIDC_ROLE_MAP: most privileged first, since the first value that matches wins. */
export const oidcRoleMap =
  "verity-admins=admin,verity-engineers=engineer,verity-auditors=auditor,verity-operators=operator";

export type OidcAccount = {
  sub: string;
  /** What the person types on the provider's sign-in page. */
  login: string;
  password: string;
  name: string;
  email: string;
  groups: string[];
};

export const oidcAccounts = {
  // Groups the role map does not name ride along, as they do at a real provider.
  operator: {
    sub: "e2e-sub-olga",
    login: "olga.sso",
    password: "olga-sso-password",
    name: "Olga Single-Sign-On",
    email: "olga.sso@example.test",
    groups: ["everyone", "verity-operators"],
  },
  auditor: {
    sub: "e2e-sub-aude",
    login: "aude.sso",
    password: "aude-sso-password",
    name: "Aude Auditor",
    email: "aude.sso@example.test",
    groups: ["verity-auditors"],
  },
  // In two mapped groups: the map's order makes her an admin, not an operator.
  admin: {
    sub: "e2e-sub-amira",
    login: "amira.sso",
    password: "amira-sso-password",
    name: "Amira Admin",
    email: "amira.sso@example.test",
    groups: ["verity-operators", "verity-admins"],
  },
  // Signs in at the provider, but no group of hers maps to a Verity role.
  unmapped: {
    sub: "e2e-sub-nadia",
    login: "nadia.sso",
    password: "nadia-sso-password",
    name: "Nadia Marketing",
    email: "nadia.sso@example.test",
    groups: ["everyone", "marketing"],
  },
} satisfies Record<string, OidcAccount>;
