import { parseEnv } from "node:util";
import { describe, expect, it } from "vitest";
import { AppError } from "@/lib/core/errors";
import { policyVersionOf } from "@/lib/model/checkpoints/checkpoint-policy";
import { describeRecoverySecrets, fingerprintOf } from "@/lib/use-cases/failover/recovery-secrets-bundle";
import { restoreRecoverySecrets } from "@/lib/use-cases/failover/restore-recovery-secrets";

const session = "s".repeat(40);
const newKey = "n".repeat(40);
const oldKey = "o".repeat(40);
const keyringFile = "/srv/verity/keys/keyring.json";

function bundle(overrides: Record<string, unknown> = {}, variables: Record<string, string | undefined> = {}) {
  return {
    format: "verity-recovery-secrets",
    version: 1,
    exported_at: "2026-12-02T09:00:00.000Z",
    policy_version: policyVersionOf(12_345),
    variables: {
      NEXTAUTH_SECRET: session,
      VERITY_CHECKPOINT_KEYS: `primary-2=${newKey},primary-1=${oldKey}`,
      VERITY_CHECKPOINT_ACTIVE_KEY: "primary-2",
      VERITY_OUTBOX_SECRET: "b".repeat(40),
      VERITY_LOOKUP_SECRET: "l".repeat(40),
      VERITY_SANDBOX_WEBHOOK_SECRET: "w".repeat(40),
      VERITY_OIDC_ISSUER: "https://sso.example.com/realm",
      VERITY_OIDC_CLIENT_ID: "verity",
      VERITY_OIDC_CLIENT_SECRET: "c#lient,secret=x",
      VERITY_OIDC_ROLE_MAP: "ops=operator,eng=engineer",
      VERITY_FOUR_EYES_THRESHOLD_CENTS: "12345",
      ...variables,
    },
    sources: { NEXTAUTH_SECRET: "data folder" },
    keyring: null,
    ...overrides,
  };
}

function fieldsOf(raw: unknown): string[] {
  try {
    restoreRecoverySecrets(raw, { keyringFile });
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return ((error as AppError).details.errors ?? []).map((e) => e.field);
  }
  throw new Error("restored a bundle that should have been refused");
}

describe("restoreRecoverySecrets", () => {
  it("writes an environment file that reads back to the bundle's values, the policy version matching", () => {
    const restored = restoreRecoverySecrets(bundle(), { keyringFile });
    expect(parseEnv(restored.envFile)).toEqual(bundle().variables);
    expect(restored.policy).toEqual({ primary: policyVersionOf(12_345), standby: policyVersionOf(12_345), same: true });
  });

  it("carries the primary's keyring to the file the environment file names", () => {
    const kek = Buffer.alloc(32, 7).toString("base64");
    const text = JSON.stringify({
      format: 1,
      tenants: { default: { current: "default-kek-1", keys: { "default-kek-1": kek } } },
    });
    const restored = restoreRecoverySecrets(
      bundle({ keyring: { file: "/srv/primary/.data/keys/keyring.json", text } }),
      { keyringFile },
    );
    expect(restored.keyring).toEqual({ file: keyringFile, text });
    expect(parseEnv(restored.envFile).VERITY_KEYRING_FILE).toBe(keyringFile);
    const lines = describeRecoverySecrets(restored.bundle).join("\n");
    expect(lines).toContain(`default: default-kek-1 (current) ${fingerprintOf(kek)}`);
    expect(lines).not.toContain(kek);
    expect(fieldsOf(bundle({ keyring: { file: "/k.json", text: "{}" } }))).toEqual(["keyring.text"]);
    // Without a keyring, no path to one: the standby must not open an empty keyring as if it were the primary's.
    expect(parseEnv(restoreRecoverySecrets(bundle(), { keyringFile }).envFile)).not.toHaveProperty(
      "VERITY_KEYRING_FILE",
    );
  });

  it("says when this release's policy version differs from the primary's, without refusing", () => {
    const restored = restoreRecoverySecrets(bundle({ policy_version: policyVersionOf(50_000) }), { keyringFile });
    expect(restored.policy.same).toBe(false);
    expect(policyVersionOf(50_000)).not.toBe(policyVersionOf(12_345));
  });

  it("describes every value without printing a secret", () => {
    const lines = describeRecoverySecrets(restoreRecoverySecrets(bundle(), { keyringFile }).bundle).join("\n");
    for (const secret of [session, newKey, oldKey, "c#lient,secret=x"]) expect(lines).not.toContain(secret);
    expect(lines).toContain(`primary-2 (active) ${fingerprintOf(newKey)}, primary-1 ${fingerprintOf(oldKey)}`);
    expect(lines).toContain("(from the primary's data folder)");
    expect(lines).toContain("VERITY_FOUR_EYES_THRESHOLD_CENTS 12345");
  });

  it("refuses what a standby could not stand in with, naming each field", () => {
    expect(fieldsOf({ ...bundle(), format: "something-else" })).toEqual(["format"]);
    expect(fieldsOf(bundle({}, { NEXTAUTH_SECRET: undefined, VERITY_LOOKUP_SECRET: undefined }))).toEqual([
      "variables.NEXTAUTH_SECRET",
      "variables.VERITY_LOOKUP_SECRET",
    ]);
    expect(fieldsOf(bundle({}, { VERITY_CHECKPOINT_ACTIVE_KEY: "primary-3" }))).toEqual([
      "variables.VERITY_CHECKPOINT_ACTIVE_KEY",
    ]);
    expect(
      fieldsOf(bundle({}, { VERITY_CHECKPOINT_KEYS: `a=${newKey},a=${oldKey}`, VERITY_CHECKPOINT_ACTIVE_KEY: "a" })),
    ).toEqual(["variables.VERITY_CHECKPOINT_KEYS"]);
    expect(fieldsOf(bundle({}, { NEXTAUTH_SECRET: "short" }))).toEqual(["variables.NEXTAUTH_SECRET"]);
    expect(fieldsOf(bundle({}, { VERITY_OIDC_CLIENT_SECRET: undefined }))).toEqual([
      "variables.VERITY_OIDC_CLIENT_SECRET",
    ]);
    // A quote or a line break would end the value early in the environment file.
    expect(fieldsOf(bundle({}, { VERITY_OIDC_CLIENT_ID: "it's" }))).toEqual(["variables.VERITY_OIDC_CLIENT_ID"]);
    expect(fieldsOf(bundle({}, { DATABASE_URL: "postgresql://elsewhere/db" }))).toEqual(["variables.DATABASE_URL"]);
  });
});
