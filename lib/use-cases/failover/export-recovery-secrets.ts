import { existsSync, readFileSync } from "node:fs";
import {
  getAuthSecret,
  getCheckpointKeys,
  getEnv,
  getLookupSecret,
  getOutboxSecret,
  getSandboxWebhookSecret,
} from "@/lib/config/env";
import { getKeyProvider, LocalKeyringProvider } from "@/lib/config/keyring";
import { currentPolicyVersion } from "@/lib/model/checkpoints/checkpoint-policy";
import {
  RECOVERY_SECRETS_FORMAT,
  RecoverySecretsBundleSchema,
  type RecoverySecretsBundle,
  type RecoveryVariable,
} from "@/lib/use-cases/failover/recovery-secrets-bundle";

/**
 * This server's identity and policy dependencies as a recovery bundle
 * (recovery-secrets-bundle.ts), read from its configuration and data folder
 * exactly as the running server reads them: a secret the server generated
 * (no variable set) is the data folder's copy, so the standby gets the same
 * one. Run where the primary runs, with its environment.
 */
export function exportRecoverySecrets(now: Date = new Date()): RecoverySecretsBundle {
  const env = getEnv();
  const variables: Partial<Record<RecoveryVariable, string>> = {};
  const sources: Partial<Record<RecoveryVariable, "configuration" | "data folder">> = {};
  const put = (name: RecoveryVariable, value: string | number | undefined, generated = false) => {
    if (value === undefined) return;
    variables[name] = String(value);
    sources[name] = generated ? "data folder" : "configuration";
  };

  put("NEXTAUTH_SECRET", getAuthSecret(), env.NEXTAUTH_SECRET === undefined);
  put("NEXTAUTH_URL", env.NEXTAUTH_URL);
  put("VERITY_SESSION_MAX_AGE_HOURS", env.VERITY_SESSION_MAX_AGE_HOURS);
  put("VERITY_OIDC_ISSUER", env.VERITY_OIDC_ISSUER);
  put("VERITY_OIDC_CLIENT_ID", env.VERITY_OIDC_CLIENT_ID);
  put("VERITY_OIDC_CLIENT_SECRET", env.VERITY_OIDC_CLIENT_SECRET);
  if (env.VERITY_OIDC_ISSUER) put("VERITY_OIDC_ROLE_CLAIM", env.VERITY_OIDC_ROLE_CLAIM);
  put("VERITY_OIDC_ROLE_MAP", env.VERITY_OIDC_ROLE_MAP);

  // The ring in its configured order (the first is the newest), the active key named explicitly.
  const keyring = getCheckpointKeys();
  const generatedKeys = env.VERITY_CHECKPOINT_KEYS === undefined;
  put(
    "VERITY_CHECKPOINT_KEYS",
    Object.entries(keyring.keys)
      .map(([id, secret]) => `${id}=${secret}`)
      .join(","),
    generatedKeys,
  );
  put("VERITY_CHECKPOINT_ACTIVE_KEY", keyring.activeKeyId);

  put("VERITY_OUTBOX_SECRET", getOutboxSecret(), env.VERITY_OUTBOX_SECRET === undefined);
  put("VERITY_LOOKUP_SECRET", getLookupSecret(), env.VERITY_LOOKUP_SECRET === undefined);
  put("VERITY_SANDBOX_WEBHOOK_SECRET", getSandboxWebhookSecret(), env.VERITY_SANDBOX_WEBHOOK_SECRET === undefined);
  put("STRIPE_WEBHOOK_SECRET", env.STRIPE_WEBHOOK_SECRET);
  put("VERITY_PAYMENTS_PROVIDER", env.VERITY_PAYMENTS_PROVIDER);
  put("STRIPE_API_BASE", env.STRIPE_API_BASE);
  put("STRIPE_API_KEY", env.STRIPE_API_KEY);
  put("VERITY_OUTBOX_WEBHOOK_URL", env.VERITY_OUTBOX_WEBHOOK_URL);

  put("VERITY_ENCRYPTION_AT_REST", env.VERITY_ENCRYPTION_AT_REST);
  put("VERITY_FOUR_EYES_THRESHOLD_CENTS", env.VERITY_FOUR_EYES_THRESHOLD_CENTS);
  put("VERITY_MAX_LEASE_TTL_SECONDS", env.VERITY_MAX_LEASE_TTL_SECONDS);
  put("VERITY_SENT_TIMEOUT_MS", env.VERITY_SENT_TIMEOUT_MS);
  put("VERITY_IDEMPOTENCY_WINDOW_MS", env.VERITY_IDEMPOTENCY_WINDOW_MS);
  put("VERITY_AUDIT_RETENTION_DAYS", env.VERITY_AUDIT_RETENTION_DAYS);
  put("VERITY_DEMO_DATA", env.VERITY_DEMO_DATA ? "true" : "false");

  // Parsed before it is written: a value that would not survive the environment file fails here, on the primary.
  return RecoverySecretsBundleSchema.parse({
    format: RECOVERY_SECRETS_FORMAT,
    version: 1,
    exported_at: now.toISOString(),
    policy_version: currentPolicyVersion(),
    variables,
    sources,
    keyring: keyringOf(),
  });
}

/**
 * The local keyring file as it is now (its writes are renames: a read never
 * sees half of one). None before the first sealed value has made it, and
 * none for a provider that keeps its keys itself (a KMS: the standby needs
 * access to it instead).
 */
function keyringOf(): { file: string; text: string } | null {
  const provider = getKeyProvider();
  if (!(provider instanceof LocalKeyringProvider) || !existsSync(provider.file)) return null;
  return { file: provider.file, text: readFileSync(provider.file, "utf8") };
}
