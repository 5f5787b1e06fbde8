import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseEnv, promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { verityCliArgs } from "@/tests/cli/cli-harness";

const run = promisify(execFile);
const scratch = mkdtempSync(path.join(tmpdir(), "verity-recovery-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * `npm run -s verity -- recovery …` as real processes on a primary that
 * configured nothing: every secret it has was generated into its data
 * folder, which is what the bundle must carry.
 */
async function verity(args: string[]): Promise<{ code: number; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(VERITY_|NEXTAUTH_|STRIPE_|DATABASE_URL$)/.test(k)) delete env[k];
  try {
    const { stdout, stderr } = await run(process.execPath, [...verityCliArgs(), ...args], {
      env: { ...env, VERITY_DATA_DIR: path.join(scratch, "primary"), VERITY_LOG_LEVEL: "silent" },
      timeout: 120_000,
    });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe("verity recovery", () => {
  it(
    "exports the generated secrets, restores them as an environment file, and refuses a bad bundle changing nothing",
    { timeout: 180_000 },
    async () => {
      const bundleFile = path.join(scratch, "bundle.json");
      const exported = await verity(["recovery", "export-secrets", "--out", bundleFile]);
      expect(exported.code, exported.out).toBe(0);
      expect(statSync(bundleFile).mode & 0o777).toBe(0o600);
      const generated = [
        "auth-secret",
        "checkpoint-key",
        "outbox-secret",
        "lookup-secret",
        "sandbox-webhook-secret",
      ].map((name) => readFileSync(path.join(scratch, "primary", name), "utf8").trim());
      for (const secret of generated) expect(exported.out).not.toContain(secret);
      expect(exported.out).toMatch(/NEXTAUTH_SECRET +sha256:[0-9a-f]{12} \(from the primary's data folder\)/);

      // Never over an existing file.
      const again = await verity(["recovery", "export-secrets", "--out", bundleFile]);
      expect(again).toEqual({ code: 1, out: expect.stringContaining(`${bundleFile} exists`) });

      const envFile = path.join(scratch, "standby.env");
      const restored = await verity(["recovery", "restore-secrets", "--in", bundleFile, "--out", envFile]);
      expect(restored.code, restored.out).toBe(0);
      const variables = parseEnv(readFileSync(envFile, "utf8"));
      // The generated secrets, now explicit: the standby cannot generate its own by accident.
      expect(variables.NEXTAUTH_SECRET).toBe(generated[0]);
      expect(variables.VERITY_CHECKPOINT_KEYS).toBe(`local-1=${generated[1]}`);
      expect(variables.VERITY_CHECKPOINT_ACTIVE_KEY).toBe("local-1");
      expect(restored.out).toMatch(/policy_version +policy:[0-9a-f]{16} \(the primary's\)/);

      // A bundle someone edited: refused naming the field, and no file written.
      const bundle = JSON.parse(readFileSync(bundleFile, "utf8")) as { variables: Record<string, string> };
      bundle.variables.VERITY_CHECKPOINT_ACTIVE_KEY = "primary-9";
      delete bundle.variables.NEXTAUTH_SECRET;
      const edited = path.join(scratch, "edited.json");
      writeFileSync(edited, JSON.stringify(bundle));
      const refusedEnv = path.join(scratch, "refused.env");
      const refused = await verity(["recovery", "restore-secrets", "--in", edited, "--out", refusedEnv]);
      expect(refused.code).toBe(1);
      expect(refused.out).toContain("variables.NEXTAUTH_SECRET: is required");
      expect(refused.out).toContain(
        'variables.VERITY_CHECKPOINT_ACTIVE_KEY: "primary-9" is not in VERITY_CHECKPOINT_KEYS',
      );
      expect(existsSync(refusedEnv)).toBe(false);
    },
  );
});
