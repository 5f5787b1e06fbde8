import { parseEnvValues } from "@/lib/config/env";
import { AppError, fieldErrorsFromZod, type FieldError } from "@/lib/core/errors";
import { policyVersionOf } from "@/lib/model/checkpoints/checkpoint-policy";
import {
  recoveryVariableNames,
  parseKeyringText,
  recoveryVariables,
  requiredRecoveryVariables,
  RecoverySecretsBundleSchema,
  type RecoverySecretsBundle,
} from "@/lib/use-cases/failover/recovery-secrets-bundle";

export interface RestoredRecoverySecrets {
  bundle: RecoverySecretsBundle;
  /** The standby's environment file: one `NAME='value'` line per variable, read by `node --env-file` and by a shell's `.` alike. */
  envFile: string;
  /** The primary's keyring file, to be written where the environment file's VERITY_KEYRING_FILE says; null when it had none. */
  keyring: { file: string; text: string } | null;
  /** The primary's policy_version and the one this release computes from the restored settings. */
  policy: { primary: string; standby: string; same: boolean };
}

/**
 * A recovery bundle checked before a standby starts on it, and the
 * environment file it becomes. Refused (validation_failed, every problem at
 * its field) when it is not a bundle, lacks a secret a standby cannot do
 * without, holds a value the server's own configuration check refuses, or
 * names an active checkpoint key that is not in its ring: a standby that
 * starts on it would refuse the primary's sessions or checkpoints later, one
 * at a time, instead of now. A policy_version that differs is reported, not
 * refused: a later release may change the permission table on purpose, and
 * the restore plan of every older checkpoint then says so.
 */
export function restoreRecoverySecrets(raw: unknown, options: { keyringFile: string }): RestoredRecoverySecrets {
  if (/[\r\n'\0]/.test(options.keyringFile))
    throw invalid([{ field: "--keyring-out", message: "must not contain a line break, a NUL or a single quote" }]);
  const parsed = RecoverySecretsBundleSchema.safeParse(raw);
  if (!parsed.success) throw invalid(fieldErrorsFromZod(parsed.error.issues));
  const bundle = parsed.data;
  const errors: FieldError[] = requiredRecoveryVariables
    .filter((name) => bundle.variables[name] === undefined)
    .map((name) => ({ field: `variables.${name}`, message: "is required: a standby cannot stand in without it" }));

  const checked = parseEnvValues(bundle.variables);
  if (!checked.success)
    errors.push(...fieldErrorsFromZod(checked.error.issues).map((e) => ({ ...e, field: `variables.${e.field}` })));

  const ring = bundle.variables.VERITY_CHECKPOINT_KEYS;
  const active = bundle.variables.VERITY_CHECKPOINT_ACTIVE_KEY;
  if (ring && active) {
    const ids = ring.split(",").map((pair) => pair.trim().split("=")[0]);
    if (!ids.includes(active))
      errors.push({
        field: "variables.VERITY_CHECKPOINT_ACTIVE_KEY",
        message: `"${active}" is not in VERITY_CHECKPOINT_KEYS (${ids.join(", ")})`,
      });
    const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
    if (repeated)
      errors.push({ field: "variables.VERITY_CHECKPOINT_KEYS", message: `key id "${repeated}" appears twice` });
  }
  if (bundle.variables.VERITY_OIDC_ISSUER)
    for (const name of ["VERITY_OIDC_CLIENT_ID", "VERITY_OIDC_CLIENT_SECRET", "VERITY_OIDC_ROLE_MAP"] as const)
      if (bundle.variables[name] === undefined)
        errors.push({ field: `variables.${name}`, message: "is required with VERITY_OIDC_ISSUER" });
  if (bundle.keyring) {
    const keyring = parseKeyringText(bundle.keyring.text);
    if (!keyring.ok) errors.push({ field: "keyring.text", message: keyring.message });
  }
  if (errors.length > 0) throw invalid(errors);
  const variables = { ...bundle.variables };
  if (bundle.keyring) variables.VERITY_KEYRING_FILE = options.keyringFile;
  else delete variables.VERITY_KEYRING_FILE;

  const standby = policyVersionOf(Number(bundle.variables.VERITY_FOUR_EYES_THRESHOLD_CENTS));
  const lines = recoveryVariableNames
    .filter((name) => variables[name] !== undefined)
    .map((name) => `${name}='${variables[name]}'`);
  const envFile = [
    `# Verity standby configuration, restored from a recovery bundle the primary exported at ${bundle.exported_at}.`,
    `# Secrets: keep this file 0600. Variables set in the environment take precedence over these lines.`,
    `# The primary's policy_version: ${bundle.policy_version}; this release's with these settings: ${standby}.`,
    ...groupComments(lines),
    "",
  ].join("\n");
  return {
    bundle,
    envFile,
    keyring: bundle.keyring ? { file: options.keyringFile, text: bundle.keyring.text } : null,
    policy: { primary: bundle.policy_version, standby, same: standby === bundle.policy_version },
  };
}

/** The lines under a comment naming each part (session, single sign-on, …), in the bundle's order. */
function groupComments(lines: string[]): string[] {
  const out: string[] = [];
  let part: string | undefined;
  for (const line of lines) {
    const name = line.slice(0, line.indexOf("=")) as keyof typeof recoveryVariables;
    if (recoveryVariables[name].part !== part) {
      part = recoveryVariables[name].part;
      out.push(`# ${part}`);
    }
    out.push(line);
  }
  return out;
}

function invalid(errors: FieldError[]): AppError {
  return new AppError(
    "validation_failed",
    `Not a usable recovery bundle: ${errors.map((e) => `${e.field || "(the file)"}: ${e.message}`).join("; ")}`,
    { errors },
  );
}
