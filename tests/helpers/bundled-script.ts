import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { buildSync } from "esbuild";

const root = path.resolve(import.meta.dirname, "..", "..");
const bundles = new Map<string, string>();

/**
 * `entry` bundled once per test file and run by plain node: its packages
 * left to node_modules, so it runs exactly the code under test, without
 * tsx's loader, which resolves and compiles each of the hundreds of modules a
 * command reaches on every start (a CLI command: ~5 s of CPU through tsx,
 * ~3 s bundled). The tests that start processes by the dozen use it: the
 * startup worker (tests/startup/helpers.ts), the CLI (tests/cli/cli-harness.ts),
 * the chaos workers and sandbox, and the failover tests' refund worker.
 *
 * The bundle lives in node_modules/.cache/verity (where its packages
 * resolve), named by its content: a run reuses what an earlier one wrote, and
 * nothing is left to clean up (a test file's process is ended by vitest, not
 * left to run an exit handler).
 */
export function bundledScript(entry: string, name: string): string {
  const known = bundles.get(entry);
  if (known) return known;
  const built = buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
    write: false,
  }).outputFiles[0]!.text;
  const cache = path.join(root, "node_modules", ".cache", "verity");
  const file = path.join(cache, `${name}-${createHash("sha256").update(built).digest("hex").slice(0, 16)}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(cache, { recursive: true });
    // Written aside and renamed: another test file may be writing the same bundle at the same moment.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, built);
    renameSync(partial, file);
  }
  bundles.set(entry, file);
  return file;
}
