/**
 * The cost of encryption at rest: `bench:transitions` and `bench:effects`,
 * each run with VERITY_ENCRYPTION_AT_REST=on and =off in the same run, and
 * the throughput with it on as a ratio of the throughput with it off.
 *
 *   npm run bench:encryption                               # both benches, on/off/off/on
 *   npm run bench:encryption -- --bench effects            # one of them
 *   BENCH_EFFECTS=200 BENCH_TRANSITIONS=1000 npm run bench:encryption
 *   BENCH_TRANSITION_PATCH=subtask_title npm run bench:encryption -- --bench transitions
 *
 * The transitions half patches only the hop count unless
 * BENCH_TRANSITION_PATCH=subtask_title: then each transition also renames a
 * subtask (free text, confidential), sealed in the state and the patch, and
 * the ratio includes the task state's own sealing (docs/encryption.md).
 *
 * Each side is the bench itself in a process of its own (the setting is read
 * once per process), on its own throwaway PostgreSQL database, with its own
 * keyring in a temporary folder. The sides run on, off, off, on, so that load
 * that comes and goes on a shared machine weighs on both alike. Each bench
 * also measures a baseline without the engine in the same process (raw SQL,
 * direct provider calls); the engine's share of that baseline, on against
 * off, is the figure least moved by other work on the machine, and is
 * printed next to the plain ratio.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

type BenchName = "transitions" | "effects";
type Setting = "on" | "off";

/** Per concurrency level: the engine's throughput and the same run's baseline. */
type Levels = Map<number, { engine: number; baseline: number }>;

const order: readonly Setting[] = ["on", "off", "off", "on"];

function benchesFromArgs(argv: readonly string[]): BenchName[] {
  const at = argv.indexOf("--bench");
  if (at === -1) return ["transitions", "effects"];
  const named = argv[at + 1];
  if (named !== "transitions" && named !== "effects") throw new Error("--bench takes transitions or effects");
  return [named];
}

/** The lines each bench prints per level (bench/transitions.ts, bench/effects.ts). */
function levelsOf(bench: BenchName, output: string): Levels {
  const levels: Levels = new Map();
  if (bench === "transitions") {
    for (const m of output.matchAll(/^concurrency (\d+): engine (\d+)\/s .*baseline (\d+)\/s/gm))
      levels.set(Number(m[1]), { engine: Number(m[2]), baseline: Number(m[3]) });
  } else {
    for (const m of output.matchAll(/^concurrency (\d+): ledger (\d+)\/s, .*direct (\d+)\/s/gm))
      levels.set(Number(m[1]), { engine: Number(m[2]), baseline: Number(m[3]) });
  }
  if (levels.size === 0) throw new Error(`bench:${bench} printed no result:\n${output}`);
  return levels;
}

function runBench(bench: BenchName, setting: Setting, keyringDir: string): Promise<Levels> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join("bench", `${bench}.ts`)], {
      env: {
        ...process.env,
        VERITY_ENCRYPTION_AT_REST: setting,
        // The ledger against direct calls is what sealing moves; DBOS's side is bench:effects' own question.
        BENCH_EFFECTS_DBOS: "off",
        VERITY_KEYRING_FILE: path.join(keyringDir, setting, "keyring.json"),
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`bench:${bench} with encryption ${setting} exited with ${code}`));
      try {
        resolve(levelsOf(bench, output));
      } catch (error) {
        reject(error as Error);
      }
    });
  });
}

function sum(runs: readonly Levels[], level: number, side: "engine" | "baseline"): number {
  return runs.reduce((total, run) => total + (run.get(level)?.[side] ?? Number.NaN), 0);
}

async function main() {
  const benches = benchesFromArgs(process.argv.slice(2));
  const keyringDir = mkdtempSync(path.join(os.tmpdir(), "verity-bench-keys-"));
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
  console.log(`# bench:encryption  ${new Date().toISOString()}`);
  console.log(`# ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, Node ${process.version}`);
  console.log(
    `# order ${order.join(", ")}; transitions patch ${process.env.BENCH_TRANSITION_PATCH ?? "hops"}; load average at start: ${load()}\n`,
  );
  try {
    for (const bench of benches) {
      const runs: Record<Setting, Levels[]> = { on: [], off: [] };
      for (const setting of order) {
        const started = performance.now();
        const levels = await runBench(bench, setting, keyringDir);
        runs[setting].push(levels);
        const seconds = ((performance.now() - started) / 1000).toFixed(0);
        const each = [...levels].map(([c, l]) => `c${c} ${l.engine}/s (baseline ${l.baseline}/s)`).join(", ");
        console.log(`bench:${bench} encryption ${setting}: ${each}; ${seconds} s, load ${load()}`);
      }
      const unit = bench === "transitions" ? "transitions/s" : "refunds/s";
      console.log(
        `\n| bench:${bench} concurrency | on ${unit} | off ${unit} | on / off | engine/baseline on | engine/baseline off | on / off of engine/baseline |`,
      );
      console.log("|---:|---:|---:|---:|---:|---:|---:|");
      for (const level of runs.on[0]!.keys()) {
        const on = sum(runs.on, level, "engine") / runs.on.length;
        const off = sum(runs.off, level, "engine") / runs.off.length;
        const shareOn = sum(runs.on, level, "engine") / sum(runs.on, level, "baseline");
        const shareOff = sum(runs.off, level, "engine") / sum(runs.off, level, "baseline");
        console.log(
          `| ${level} | ${on.toFixed(0)} | ${off.toFixed(0)} | ${(on / off).toFixed(2)} | ${(shareOn * 100).toFixed(0)}% | ${(shareOff * 100).toFixed(0)}% | ${(shareOn / shareOff).toFixed(2)} |`,
        );
      }
      console.log("");
    }
  } finally {
    rmSync(keyringDir, { recursive: true, force: true });
  }
  console.log(`# load average at end: ${load()}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
