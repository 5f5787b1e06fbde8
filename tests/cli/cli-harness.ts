import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll } from "vitest";
import { openDatabase } from "@/lib/db/client";
import { bundledScript } from "@/tests/helpers/bundled-script";
import { openTestPglite } from "@/tests/helpers/pglite";

const run = promisify(execFile);

type CliDb = ReturnType<typeof openDatabase>["db"];

/**
 * `npm run -s verity --` as `node <these> …args`: scripts/verity.ts bundled
 * once per test file (tests/helpers/bundled-script.ts: the same code, without
 * tsx's loader) with the npm script's `--liftoff-only` (a command lives
 * seconds, and V8's optimizing tier compiling PGlite's WebAssembly was about
 * half of each one's CPU).
 */
export function verityCliArgs(): string[] {
  return [
    "--liftoff-only",
    bundledScript(path.join(import.meta.dirname, "..", "..", "scripts", "verity.ts"), "verity-cli"),
  ];
}

/**
 * `npm run -s verity -- …` as real processes against a temporary embedded
 * database folder per test file. The folder belongs to one process at a
 * time, so `withDatabase` opens it only between commands.
 * Each command runs as `verityCliArgs()` says.
 *
 * `folder: "migrated"` (the default) starts from the test run's migrated
 * template (tests/helpers/pglite-template.ts), as after a first `npm start`;
 * `"none"` leaves the CLI to create and migrate the folder itself, as on a
 * machine where no server ever ran: about ten seconds of CPU, paid by the
 * one file that tests it (agents-cli.test.ts).
 */
export function useCliDataDir(
  prefix: string,
  options: { folder?: "migrated" | "none" } = {},
): {
  verity: (...args: string[]) => Promise<string>;
  withDatabase: <T>(work: (db: CliDb) => Promise<T>) => Promise<T>;
} {
  let dataDir: string;
  const cli = verityCliArgs();
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), prefix));
    if ((options.folder ?? "migrated") === "migrated") {
      await (await openTestPglite({ dataDir: path.join(dataDir, "pglite") })).close();
    }
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  return {
    async verity(...args) {
      const { stdout } = await run(process.execPath, [...cli, ...args], {
        env: { ...process.env, VERITY_DATA_DIR: dataDir, VERITY_LOG_LEVEL: "silent" },
        timeout: 240_000,
      });
      return stdout;
    },
    async withDatabase(work) {
      const handle = openDatabase({ kind: "pglite", dir: path.join(dataDir, "pglite") });
      try {
        return await work(handle.db);
      } finally {
        await handle.close();
      }
    },
  };
}
