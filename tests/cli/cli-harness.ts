import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll } from "vitest";
import { openDatabase } from "@/lib/db/client";

const run = promisify(execFile);

type CliDb = ReturnType<typeof openDatabase>["db"];

/** `npm run -s verity --` as `node <these> …args`: the npm script's own flags (see useCliDataDir). */
export const verityCliArgs: readonly string[] = ["--liftoff-only", "--import", "tsx", "scripts/verity.ts"];

/**
 * `npm run -s verity -- …` as real processes (node --liftoff-only with tsx, as
 * the npm script runs it: a command lives seconds, and V8's optimizing tier
 * compiling PGlite's WebAssembly was about half of each one's CPU, 4.8 s →
 * 2.7 s measured)
 * against a temporary embedded database folder per test file, which the CLI
 * creates and migrates itself. The folder belongs to one process at a time,
 * so `withDatabase` opens it only between commands.
 */
export function useCliDataDir(prefix: string): {
  verity: (...args: string[]) => Promise<string>;
  withDatabase: <T>(work: (db: CliDb) => Promise<T>) => Promise<T>;
} {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), prefix));
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  return {
    async verity(...args) {
      const { stdout } = await run(process.execPath, [...verityCliArgs, ...args], {
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
