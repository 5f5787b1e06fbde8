/**
 * A real OpenID Connect provider for the browser tests of single sign-on:
 * panva's oidc-provider (certified, the library many identity servers are
 * built on) on a loopback port, with one confidential client, the
 * "real deployment" Verity server of playwright.config.ts, and the people
 * of e2e/oidc/accounts.ts. Its sign-in and consent pages are plain forms,
 * served here (oidc-provider leaves them to the host), so the browser signs
 * in exactly as a person would: username and password checked, then
 * consent. Tokens and sessions live in oidc-provider's memory store: a
 * restart forgets them, which a test run never needs.
 *
 * Started by Playwright's webServer (`npx tsx e2e/oidc/provider.ts`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import Provider, { type Account } from "oidc-provider";
import { oidcAccounts, oidcClient, type OidcAccount } from "./accounts";
import { deployment, oidcProvider } from "../deployment/servers";

const accounts: OidcAccount[] = Object.values(oidcAccounts);

const provider = new Provider(oidcProvider.issuer, {
  clients: [
    {
      client_id: oidcClient.id,
      client_secret: oidcClient.secret,
      redirect_uris: [`${deployment.baseURL}/api/auth/callback/oidc`],
      grant_types: ["authorization_code"],
      response_types: ["code"],
    },
  ],
  async findAccount(_ctx: unknown, sub: string): Promise<Account | undefined> {
    const account = accounts.find((a) => a.sub === sub);
    if (!account) return undefined;
    return {
      accountId: account.sub,
      claims: () => ({
        sub: account.sub,
        name: account.name,
        preferred_username: account.login,
        email: account.email,
        groups: account.groups,
      }),
    };
  },
  // Verity asks for "openid profile email"; the groups ride with the profile
  // scope. oidc-provider's default, as OpenID Connect Core 5.4 says, returns
  // a scope's claims from the userinfo endpoint, not in the ID token, when an
  // access token is issued: Verity must read them there too
  // (lib/adapters/auth/oidc.ts).
  claims: { openid: ["sub"], profile: ["name", "preferred_username", "groups"], email: ["email"] },
  pkce: { required: () => true },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
  cookies: { keys: ["verity-e2e-oidc-cookie-signing-key"] },
});

provider.on("server_error", (_ctx, error) => console.error("oidc-provider: server error", error));

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function page(res: ServerResponse, status: number, title: string, body: string): void {
  res.statusCode = status;
  res.setHeader("Content-Type", "text/html; charset=utf-8");
  res.setHeader("Cache-Control", "no-store");
  res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Example identity provider</title></head>
<body><main><p>Example identity provider (Verity's tests)</p><h1>${escape(title)}</h1>${body}</main></body></html>`);
}

function loginPage(res: ServerResponse, uid: string, error?: string): void {
  page(
    res,
    error ? 401 : 200,
    "Sign in",
    `${error ? `<p role="alert">${escape(error)}</p>` : ""}
<form method="post" action="/interaction/${escape(uid)}/login">
  <p><label for="login">Username</label> <input id="login" name="login" autocomplete="username" required autofocus></p>
  <p><label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password" required></p>
  <p><button type="submit">Sign in</button></p>
</form>`,
  );
}

function consentPage(res: ServerResponse, uid: string, scopes: string[]): void {
  page(
    res,
    200,
    "Allow Verity?",
    `<p>Verity asks to know who you are${scopes.length ? ` (${escape(scopes.join(", "))})` : ""}, including your groups.</p>
<form method="post" action="/interaction/${escape(uid)}/confirm"><button type="submit">Allow</button></form>
<form method="post" action="/interaction/${escape(uid)}/abort"><button type="submit">Deny</button></form>`,
  );
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  let body = "";
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > 10_000) throw new Error("form too large");
  }
  return new URLSearchParams(body);
}

/** The interaction pages: GET /interaction/<uid>, POST …/login, …/confirm, …/abort. */
async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined) {
  const details = await provider.interactionDetails(req, res);
  // The cookie names the interaction in progress; a URL naming another one is stale.
  if (details.uid !== uid) return page(res, 400, "This sign-in expired", "<p>Start again from the application.</p>");
  if (req.method === "GET" && action === undefined) {
    if (details.prompt.name === "login") return loginPage(res, uid);
    const scopes = (details.prompt.details.missingOIDCScope ?? []).filter((s) => s !== "openid");
    return consentPage(res, uid, scopes);
  }
  if (req.method !== "POST") return page(res, 405, "Not allowed", "");
  if (action === "login") {
    const form = await formOf(req);
    const account = accounts.find((a) => a.login === form.get("login") && a.password === form.get("password"));
    if (!account) return loginPage(res, uid, "That username and password do not match.");
    return provider.interactionFinished(
      req,
      res,
      { login: { accountId: account.sub } },
      {
        mergeWithLastSubmission: false,
      },
    );
  }
  if (action === "confirm") {
    if (!details.session) return page(res, 400, "Sign in first", "");
    const grant = details.grantId
      ? ((await provider.Grant.find(details.grantId)) ??
        new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id }))
      : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    if (details.prompt.details.missingOIDCScope) grant.addOIDCScope(details.prompt.details.missingOIDCScope.join(" "));
    if (details.prompt.details.missingOIDCClaims) grant.addOIDCClaims(details.prompt.details.missingOIDCClaims);
    const grantId = await grant.save();
    return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
  if (action === "abort")
    return provider.interactionFinished(
      req,
      res,
      { error: "access_denied", error_description: "The person denied the request" },
      { mergeWithLastSubmission: false },
    );
  return page(res, 404, "Not found", "");
}

const oidc = provider.callback();
const server = createServer((req, res) => {
  const match = /^\/interaction\/([\w-]+)(?:\/(login|confirm|abort))?$/.exec(
    new URL(req.url ?? "/", "http://x").pathname,
  );
  if (!match) return oidc(req, res);
  interaction(req, res, match[1]!, match[2]).catch((error: unknown) => {
    // An interaction cookie gone or expired (SessionNotFound) is the usual case: say so, do not crash.
    console.error("oidc-provider: interaction failed", error);
    if (!res.headersSent) page(res, 400, "This sign-in cannot go on", `<p>${escape(String(error))}</p>`);
  });
});

server.listen(oidcProvider.port, "127.0.0.1", () =>
  console.log(`oidc-provider: issuer ${oidcProvider.issuer}, client ${oidcClient.id} for ${deployment.baseURL}`),
);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.close(() => process.exit(0)));
