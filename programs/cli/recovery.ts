/**
 * `npm run -s verity -- recovery …`: what a standby needs besides the
 * database backup (docs/recovery.md, "The runbook").
 *
 *   recovery export-secrets --out <file>
 *       on the primary, with its environment: the session secret, the
 *       checkpoint keys (retired ones included), the signing secrets, the
 *       sign-in and single sign-on settings and the policy settings, as one
 *       JSON bundle written 0600
 *   recovery restore-secrets --in <bundle> --out <file> [--keyring-out <file>]
 *       on the standby: the bundle checked (refused naming each problem)
 *       and written as an environment file, 0600, to start the standby with,
 *       and the primary's keyring file beside it (or at --keyring-out), 0600
 *       (`node --env-file=<file> --import tsx scripts/start.ts`)
 *
 *   recovery take-over --as <username> (--all | <task id>…) [--json]
 *       on the standby, before any worker: programs/cli/take-over.ts
 *
 * Neither secrets command prints a secret: what was written is listed by variable, a secret
 * by its fingerprint. (The option is --out, not --env-file: tsx hands an
 * --env-file anywhere on its command line to Node.) Neither overwrites a file: a restore must never
 * replace a configuration someone is running on.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { isAppError } from "@/lib/core/errors";
import { exportRecoverySecrets } from "@/lib/use-cases/failover/export-recovery-secrets";
import { describeRecoverySecrets } from "@/lib/use-cases/failover/recovery-secrets-bundle";
import { restoreRecoverySecrets } from "@/lib/use-cases/failover/restore-recovery-secrets";
import { requireArg, usageFailure, UsageError } from "@/programs/cli/cli-database";
import { runTakeOver } from "@/programs/cli/take-over";

const usage = `usage: npm run -s verity -- recovery <command>
  export-secrets --out <file>                       on the primary: its identity and policy dependencies, one JSON file (0600)
  restore-secrets --in <bundle> --out <file> [--keyring-out <file>]
                                                    on the standby: the bundle checked and written as an environment file
                                                    and the primary's keyring file (default: keyring.json beside it), 0600
  take-over --as <username> (--all | <task id>…) [--json]
                                                    on the standby, with its configuration, before any worker: each task's
                                                    unsettled calls reconciled, then rolled forward to its newest shipped checkpoint`;

export async function runRecoveryCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        out: { type: "string" },
        in: { type: "string" },
        "keyring-out": { type: "string" },
        as: { type: "string" },
        all: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
      },
    });
  } catch (error) {
    return usageFailure(error, usage);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  try {
    if (command === "take-over")
      return await runTakeOver({ as: values.as, all: values.all, taskIds: rest, json: values.json });
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
    switch (command) {
      case "export-secrets": {
        const out = requireArg(values.out, "--out <file>");
        const bundle = exportRecoverySecrets();
        if (!writeSecretFile(out, `${JSON.stringify(bundle, null, 2)}\n`)) return 1;
        console.log(`wrote ${out} (mode 0600): keep it with the backups, apart from them, as you keep keys`);
        for (const line of describeRecoverySecrets(bundle)) console.log(`  ${line}`);
        console.log(`  policy_version   ${bundle.policy_version}`);
        return 0;
      }
      case "restore-secrets": {
        const input = requireArg(values.in, "--in <bundle>");
        const out = requireArg(values.out, "--out <file>");
        let raw: unknown;
        try {
          raw = JSON.parse(readFileSync(input, "utf8"));
        } catch (error) {
          console.error(
            `verity: cannot read ${input} as JSON: ${error instanceof Error ? error.message : String(error)}`,
          );
          return 1;
        }
        const keyringFile = path.resolve(values["keyring-out"] ?? path.join(path.dirname(out), "keyring.json"));
        let restored;
        try {
          restored = restoreRecoverySecrets(raw, { keyringFile });
        } catch (error) {
          if (!isAppError(error)) throw error;
          console.error(`verity: ${input}: ${error.message}`);
          return 1;
        }
        const refused = [out, ...(restored.keyring ? [restored.keyring.file] : [])].find((f) => existsSync(f));
        if (refused) {
          console.error(
            `verity: ${refused} exists: choose another path, or remove it yourself (a recovery file is never overwritten)`,
          );
          return 1;
        }
        if (restored.keyring) {
          mkdirSync(path.dirname(restored.keyring.file), { recursive: true, mode: 0o700 });
          if (!writeSecretFile(restored.keyring.file, restored.keyring.text)) return 1;
          console.log(
            `wrote ${restored.keyring.file} (mode 0600): the primary's keyring; VERITY_KEYRING_FILE names it`,
          );
        }
        if (!writeSecretFile(out, restored.envFile)) return 1;
        console.log(`wrote ${out} (mode 0600) from the bundle exported at ${restored.bundle.exported_at}`);
        for (const line of describeRecoverySecrets(restored.bundle)) console.log(`  ${line}`);
        console.log(
          restored.policy.same
            ? `  policy_version   ${restored.policy.standby} (the primary's)`
            : `  policy_version   ${restored.policy.standby}, NOT the primary's ${restored.policy.primary}: this release's permission table or irreversible tools differ; restoring a primary checkpoint will report the change and re-authorize`,
        );
        console.log(`start the standby with it: node --env-file=${out} --import tsx scripts/start.ts`);
        return 0;
      }
      default:
        throw new UsageError(command ? `unknown command "recovery ${command}"` : "missing a command");
    }
  } catch (error) {
    return usageFailure(error, usage);
  }
}

/** Written 0600, never over an existing file; false (said why) when it cannot be. */
function writeSecretFile(file: string, text: string): boolean {
  try {
    writeFileSync(file, text, { mode: 0o600, flag: "wx" });
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    console.error(
      code === "EEXIST"
        ? `verity: ${file} exists: choose another path, or remove it yourself (a recovery file is never overwritten)`
        : `verity: cannot write ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return false;
  }
}
