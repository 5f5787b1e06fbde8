/**
 * Which member names hold secrets, the one answer for every place that
 * keeps a value but not its secret: the log (lib/config/log.ts), a
 * checkpoint (lib/model/checkpoints/checkpoint-redaction.ts) and the audit
 * log's details (lib/model/audit/audit-chain.ts normalizeDetails). Each
 * keeps the member's name and replaces its value.
 *
 * A name is compared normalized: lower case, without `-`, `_` or `.`, so
 * `API_KEY`, `apiKey`, `api-key` and `next-auth.session-token` read alike.
 */

/** Secrets only as the whole name: as an ending they would catch ordinary names (`bypass`, `fencing_token`, `max_tokens`). */
const wholeSecretNames: readonly string[] = ["pass", "pwd", "bearer", "credential", "credentials", "token"];

/** Endings that make any name a secret: `newPassword`, `NEXTAUTH_SECRET`, `client_secret`, `Sandbox-Signature`, `set-cookie`. */
const secretNameEndings: readonly string[] = [
  "authorization",
  "cookie",
  "password",
  "passwordhash",
  "passwd",
  "passphrase",
  "secret",
  "signature",
  "apikey",
  "accesskey",
  "signingkey",
  "privatekey",
  "secretkey",
  "checkpointkeys",
  "tokenhash",
  // Tokens that grant something. `fencing_token` is not one: it is a version number; nor is a `tokenPrefix` or `tokens_spent`.
  "accesstoken",
  "refreshtoken",
  "sessiontoken",
  "bearertoken",
  "apitoken",
  "metricstoken",
  "authtoken",
  "idtoken",
  "csrftoken",
  "agenttoken",
];

export function isSecretName(key: string): boolean {
  const name = key.toLowerCase().replace(/[-_.]/g, "");
  return wholeSecretNames.includes(name) || secretNameEndings.some((ending) => name.endsWith(ending));
}
