import { createHash } from "node:crypto";
import { z } from "zod";

/**
 * What a standby needs besides the database (docs/recovery.md, "What a
 * standby is made of"): the settings and secrets that live in the
 * configuration or the data folder, never in a backup of the database. Each
 * is carried as the variable lib/config/env.ts reads it from, so a restored
 * bundle is an environment file the standby starts with, and a secret the
 * primary generated into its data folder becomes an explicit setting there.
 *
 * Left out on purpose: DATABASE_URL, the ports, the host and the data folder
 * (the standby's own), and the provider's base URL (VERITY_SANDBOX_URL: the
 * standby's region may reach it another way).
 */
export const recoveryVariables = {
  // A console session is a JWT encrypted with this secret: without it every cookie the primary issued is refused.
  NEXTAUTH_SECRET: { part: "session", secret: true },
  NEXTAUTH_URL: { part: "session", secret: false },
  VERITY_SESSION_MAX_AGE_HOURS: { part: "session", secret: false },
  // People signed in through SSO are stored as "<issuer>#<subject>": another issuer URL makes them new accounts.
  VERITY_OIDC_ISSUER: { part: "single sign-on", secret: false },
  VERITY_OIDC_CLIENT_ID: { part: "single sign-on", secret: false },
  VERITY_OIDC_CLIENT_SECRET: { part: "single sign-on", secret: true },
  VERITY_OIDC_ROLE_CLAIM: { part: "single sign-on", secret: false },
  VERITY_OIDC_ROLE_MAP: { part: "single sign-on", secret: false },
  // Every key that signed a checkpoint the standby holds or will be shipped, the retired ones included.
  VERITY_CHECKPOINT_KEYS: { part: "checkpoint keys", secret: true },
  VERITY_CHECKPOINT_ACTIVE_KEY: { part: "checkpoint keys", secret: false },
  VERITY_OUTBOX_SECRET: { part: "signing secrets", secret: true },
  VERITY_LOOKUP_SECRET: { part: "signing secrets", secret: true },
  VERITY_SANDBOX_WEBHOOK_SECRET: { part: "signing secrets", secret: true },
  STRIPE_WEBHOOK_SECRET: { part: "signing secrets", secret: true },
  VERITY_PAYMENTS_PROVIDER: { part: "providers", secret: false },
  STRIPE_API_BASE: { part: "providers", secret: false },
  STRIPE_API_KEY: { part: "providers", secret: true },
  VERITY_OUTBOX_WEBHOOK_URL: { part: "providers", secret: false },
  // With encryption on, the keyring file (the bundle's `keyring`) opens every sealed value; off, new values are stored in the clear.
  VERITY_ENCRYPTION_AT_REST: { part: "tenant keys", secret: false },
  // Never exported (the primary's path means nothing on the standby): the restore sets it to where it wrote the keyring.
  VERITY_KEYRING_FILE: { part: "tenant keys", secret: false },
  // The threshold feeds policy_version (lib/model/checkpoints/checkpoint-policy.ts); the rest bound what agents and people may do.
  VERITY_FOUR_EYES_THRESHOLD_CENTS: { part: "policy", secret: false },
  VERITY_MAX_LEASE_TTL_SECONDS: { part: "policy", secret: false },
  VERITY_SENT_TIMEOUT_MS: { part: "policy", secret: false },
  VERITY_IDEMPOTENCY_WINDOW_MS: { part: "policy", secret: false },
  VERITY_AUDIT_RETENTION_DAYS: { part: "policy", secret: false },
  VERITY_DEMO_DATA: { part: "policy", secret: false },
} as const satisfies Record<string, { part: string; secret: boolean }>;

export type RecoveryVariable = keyof typeof recoveryVariables;

export const recoveryVariableNames = Object.keys(recoveryVariables) as [RecoveryVariable, ...RecoveryVariable[]];

/** The variables a bundle must carry: without any of them a standby is not the primary's (a restore refuses it). */
export const requiredRecoveryVariables: readonly RecoveryVariable[] = [
  "NEXTAUTH_SECRET",
  "VERITY_CHECKPOINT_KEYS",
  "VERITY_CHECKPOINT_ACTIVE_KEY",
  "VERITY_OUTBOX_SECRET",
  "VERITY_LOOKUP_SECRET",
  "VERITY_SANDBOX_WEBHOOK_SECRET",
  "VERITY_FOUR_EYES_THRESHOLD_CENTS",
];

const variableName = z.enum(recoveryVariableNames);

// One line of an environment file, single-quoted: no line break, no quote to escape.
const variableValue = z
  .string()
  .min(1, "must not be empty")
  .max(8192, "must be at most 8192 characters")
  .refine((v) => !/[\r\n'\0]/.test(v), "must not contain a line break, a NUL or a single quote");

export const RECOVERY_SECRETS_FORMAT = "verity-recovery-secrets";

export const RecoverySecretsBundleSchema = z.strictObject({
  format: z.literal(RECOVERY_SECRETS_FORMAT),
  version: z.literal(1),
  exported_at: z.iso.datetime(),
  /** The primary's policy_version when the bundle was made: the standby compares its own. */
  policy_version: z.string().regex(/^policy:[0-9a-f]{16}$/, "must be policy:<16 hex digits>"),
  variables: z.partialRecord(variableName, variableValue),
  /** Where the primary had each value: its configuration (a variable or its default), or generated into its data folder. */
  sources: z.partialRecord(variableName, z.enum(["configuration", "data folder"])),
  /**
   * The local key provider's keyring file (lib/config/keyring.ts) as the
   * primary had it, verbatim: each tenant's key-encryption keys. Null when
   * the primary had none yet (nothing sealed) or its provider is not the
   * local file.
   */
  keyring: z.strictObject({ file: z.string().min(1), text: z.string().min(1).max(4_000_000) }).nullable(),
});

export type RecoverySecretsBundle = z.infer<typeof RecoverySecretsBundleSchema>;

/** sha256 of a secret, 12 hex digits: enough to tell two copies apart, nothing to guess the secret from. */
export function fingerprintOf(secret: string): string {
  return `sha256:${createHash("sha256").update(secret).digest("hex").slice(0, 12)}`;
}

/** Checkpoint key ids and fingerprints, in the keyring's order. */
function describeCheckpointKeys(value: string, active: string | undefined): string {
  return value
    .split(",")
    .map((pair) => {
      const [id = "", secret = ""] = pair.trim().split(/=(.*)/s);
      return `${id}${id === active ? " (active)" : ""} ${fingerprintOf(secret)}`;
    })
    .join(", ");
}

const KeyringFileSchema = z.object({
  format: z.literal(1),
  tenants: z.record(
    z.string(),
    z.object({ current: z.string(), keys: z.record(z.string(), z.string()), destroyed_at: z.string().optional() }),
  ),
});

/** The keyring file's tenants, or the reason it is not a keyring (lib/config/keyring.ts's format 1). */
export function parseKeyringText(
  text: string,
): { ok: true; tenants: z.infer<typeof KeyringFileSchema>["tenants"] } | { ok: false; message: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, message: "is not JSON" };
  }
  const parsed = KeyringFileSchema.safeParse(raw);
  return parsed.success
    ? { ok: true, tenants: parsed.data.tenants }
    : { ok: false, message: "is not a keyring of format 1 ({ format: 1, tenants: { … } })" };
}

/** Per tenant: its current KEK and every KEK's fingerprint, or that its keys were destroyed. */
function describeKeyring(text: string): string {
  const keyring = parseKeyringText(text);
  if (!keyring.ok) return `a file that ${keyring.message}`;
  const tenants = Object.entries(keyring.tenants).map(([tenant, t]) =>
    t.destroyed_at
      ? `${tenant}: destroyed at ${t.destroyed_at}`
      : `${tenant}: ${Object.entries(t.keys)
          .map(([id, key]) => `${id}${id === t.current ? " (current)" : ""} ${fingerprintOf(key)}`)
          .join(", ")}`,
  );
  return tenants.length ? tenants.join("; ") : "no tenant keys yet";
}

/**
 * One line per variable the bundle holds, never a secret: a secret shows as
 * its fingerprint (checkpoint keys by id), so an operator can compare the
 * primary's and the standby's without either being printed.
 */
export function describeRecoverySecrets(bundle: RecoverySecretsBundle): string[] {
  const names = recoveryVariableNames.filter((name) => bundle.variables[name] !== undefined);
  const width = Math.max(...names.map((n) => n.length));
  const lines = names.map((name) => {
    const value = bundle.variables[name]!;
    const { part, secret } = recoveryVariables[name];
    const shown =
      name === "VERITY_CHECKPOINT_KEYS"
        ? describeCheckpointKeys(value, bundle.variables.VERITY_CHECKPOINT_ACTIVE_KEY)
        : secret
          ? fingerprintOf(value)
          : value;
    const source = bundle.sources[name];
    return `${part.padEnd(16)} ${name.padEnd(width)} ${shown}${source === "data folder" ? ` (from the primary's ${source})` : ""}`;
  });
  const keyring = bundle.keyring
    ? `${"tenant keys".padEnd(16)} ${"keyring".padEnd(width)} ${describeKeyring(bundle.keyring.text)} (the primary's ${bundle.keyring.file})`
    : `${"tenant keys".padEnd(16)} ${"keyring".padEnd(width)} none: the primary had no keyring file (nothing sealed yet, or another key provider)`;
  return [...lines, keyring];
}
