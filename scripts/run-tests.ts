/**
 * `npm test`: every test the project has, in one command, ending with one
 * line `N passed, M failed` that sums them all.
 *   0. prerequisites: Chromium and PostgreSQL, installed or started when
 *      missing (scripts/test-prerequisites.ts)
 *   1. static checks: type check, lint, format, architecture (the layer
 *      order, no cycles), dead code
 *   2. vitest: unit tests, embedded-database tests, PostgreSQL tests
 *   3. Playwright: HTTP API and browser tests against a production build
 *   4. vitest live: the framework suites (LangGraph's official checkpointer
 *      suite, the framework adapters) against live servers on that build,
 *      on the embedded database and on PostgreSQL
 * Each stage runs even when an earlier one failed, so one run shows everything.
 * The summary gives each stage's wall time and the CPU time its processes
 * used (docs/architecture.md, "Where the suite's time goes"): CPU time is
 * what a stage costs whatever else the machine is doing, and CPU over wall
 * says how many of the cores it kept busy.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash, scryptSync } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ensureTestPrerequisites } from "./test-prerequisites";

interface Tally {
  stage: string;
  passed: number;
  failed: number;
  skipped: number;
}

interface Timing {
  stage: string;
  seconds: number;
  /** User + system CPU seconds of the stage's processes; null where /proc is not there to say. */
  cpuSeconds: number | null;
}

const tallies: Tally[] = [];
const timings: Timing[] = [];
const suiteStarted = performance.now();
mkdirSync("test-results", { recursive: true });

function run(command: string, args: string[]): number {
  const result = spawnSync(command, args, { stdio: "inherit", env: process.env });
  return result.status ?? 1;
}

/**
 * The command with its output kept in a file, printed as one block under
 * its heading when it ends, so that two commands running at once do not
 * interleave their lines.
 */
function runToLog(heading: string, command: string, args: string[], log: string): Promise<number> {
  const fd = openSync(log, "w");
  const child = spawn(command, args, { stdio: ["ignore", fd, fd], env: process.env });
  return new Promise((resolve) => {
    let ended = false;
    // A child that fails to start may report both `error` and `exit`: the first one counts.
    const done = (status: number) => {
      if (ended) return;
      ended = true;
      closeSync(fd);
      process.stdout.write(`\n== ${heading} ==\n${readFileSync(log, "utf8")}`);
      resolve(status);
    };
    child.once("error", (error) => done((writeFileSync(log, `${command}: ${error.message}\n`), 1)));
    child.once("exit", (code) => done(code ?? 1));
  });
}

/**
 * CPU seconds (user + system) used so far by this process's children that
 * have ended, and by the children they waited for (Linux: cutime and cstime
 * in /proc/self/stat, in clock ticks of 1/100 s); null elsewhere.
 */
function childrenCpuSeconds(): number | null {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces: state is field 3, cutime 16, cstime 17.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[13]) + Number(fields[14]);
    return Number.isFinite(ticks) ? ticks / 100 : null;
  } catch {
    return null;
  }
}

/** Runs a stage (or stages that run side by side) and records its wall and CPU time for the summary. */
async function timed<T>(stage: string, work: () => T | Promise<T>): Promise<T> {
  const started = performance.now();
  const cpuBefore = childrenCpuSeconds();
  try {
    return await work();
  } finally {
    const cpuAfter = childrenCpuSeconds();
    timings.push({
      stage,
      seconds: (performance.now() - started) / 1000,
      cpuSeconds: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
    });
  }
}

function minutes(seconds: number): string {
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s` : `${s} s`;
}

function readJson(path: string): unknown {
  try {
    return existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Milliseconds this machine takes for a fixed piece of CPU work (integer
 * arithmetic, hashing, and scrypt's 16 MiB of memory traffic), timed at the
 * start and the end of the run. The same suite has taken 24 and 43 minutes
 * on machines of the same kind (docs/architecture.md, "Where the suite's
 * time goes"): a run's walls are read against this figure before they are
 * blamed on the suite.
 */
function referenceWorkMs(): number {
  const started = performance.now();
  let x = 0;
  for (let i = 0; i < 1e8; i++) x = (x * 31 + i) | 0;
  let digest = Buffer.alloc(1 << 20, x & 0xff);
  for (let i = 0; i < 100; i++)
    digest = Buffer.concat([createHash("sha256").update(digest).digest(), digest.subarray(32)]);
  for (let i = 0; i < 5; i++) scryptSync(digest.subarray(0, 32), "reference", 32, { N: 16384 });
  return Math.round(performance.now() - started);
}
const referenceAtStart = referenceWorkMs();

// What the stages need besides node_modules (Chromium, a PostgreSQL server),
// brought here so that `npm install && npm test` is the whole recipe.
console.log("\n== prerequisites ==");
for (const p of await timed("prerequisites", ensureTestPrerequisites)) {
  console.log(`${p.ok ? "ok  " : "FAIL"} ${p.name}: ${p.detail}`);
  if (!p.ok) tallies.push({ stage: p.name, passed: 0, failed: 1, skipped: 0 });
}

// The static checks, each the package script of the same name so that a
// developer runs exactly what the test command runs. Each counts as one test.
// Each is one single-threaded process, so they run in two lanes, one per
// core of the CI machine; the lanes are split to take about as long as each other.
const checks: Array<{ stage: string; script: string; why: string; lane: 0 | 1 }> = [
  {
    stage: "typecheck",
    script: "typecheck",
    why: "tests included: a misspelled fixture key must not compile",
    lane: 0,
  },
  {
    stage: "lint",
    script: "lint",
    why: "what tsc does not catch: a promise nobody awaits, a switch that forgets a case, React's and Next's rules (eslint.config.mjs)",
    lane: 1,
  },
  {
    stage: "format",
    script: "check:format",
    why: "one layout for every file (Prettier, .prettierrc.json); `npm run format` applies it",
    lane: 0,
  },
  {
    stage: "architecture",
    script: "check:architecture",
    why: "imports flow down the layers and never in a circle (.dependency-cruiser.cjs)",
    lane: 0,
  },
  { stage: "dead-code", script: "check:dead-code", why: "no unused file, export or dependency (knip.json)", lane: 0 },
];
const checkStatus = new Map<string, number>();
await timed("static checks", () =>
  Promise.all(
    ([0, 1] as const).map(async (lane) => {
      for (const check of checks.filter((c) => c.lane === lane)) {
        const heading = `${check.stage}: ${check.why}`;
        const status = await runToLog(heading, "npm", ["run", "-s", check.script], `test-results/${check.stage}.log`);
        checkStatus.set(check.stage, status);
      }
    }),
  ),
);
for (const { stage } of checks) {
  const ok = checkStatus.get(stage) === 0;
  tallies.push({ stage, passed: ok ? 1 : 0, failed: ok ? 0 : 1, skipped: 0 });
}

console.log("\n== vitest: unit, embedded database, PostgreSQL ==");
rmSync("test-results/vitest.json", { force: true });
const vitestStatus = await timed("vitest", () =>
  run("npx", [
    "vitest",
    "run",
    "--project=unit+pglite",
    "--project=postgres",
    "--project=postgres-contention",
    "--reporter=default",
    "--reporter=json",
    "--outputFile.json=test-results/vitest.json",
  ]),
);
tallies.push(vitestTally("vitest", vitestStatus, "test-results/vitest.json"));
printSlowest(
  "slowest vitest files (their own wall time; postgres-contention runs one file at a time, after the others)",
  vitestFileSeconds("test-results/vitest.json"),
);

/** Where a stage's time went: its slowest files, for the log (Playwright empties test-results/ when it starts). */
function printSlowest(title: string, seconds: Map<string, number>, count = 8): void {
  const slowest = [...seconds].sort((a, b) => b[1] - a[1]).slice(0, count);
  if (slowest.length === 0) return;
  console.log(`\n${title}:`);
  for (const [file, s] of slowest) console.log(`  ${minutes(s).padStart(12)}  ${file}`);
}

/** Per test file, from vitest's JSON report: the time from its start to its end. */
function vitestFileSeconds(reportPath: string): Map<string, number> {
  const report = readJson(reportPath) as
    { testResults?: Array<{ name: string; startTime: number; endTime: number }> } | undefined;
  return new Map(
    (report?.testResults ?? []).map((f) => [path.relative(process.cwd(), f.name), (f.endTime - f.startTime) / 1000]),
  );
}

/**
 * The failed tests named, printed again under the summary: CI keeps only the
 * end of a long log, and a count without names cannot be looked into (a
 * failure once went unnamed that way).
 */
const failures: string[] = [];

/** First line of a failure message, without colour codes. */
function firstLine(message: string | undefined): string {
  return (
    (message ?? "")
      .replace(/\u001b\[[0-9;]*m/g, "")
      .split("\n")
      .find((line) => line.trim()) ?? ""
  );
}

/** A vitest run's counts from its JSON report; a run that crashed before its tests counts as one failure. */
function vitestTally(stage: string, status: number, reportPath: string): Tally {
  const report = readJson(reportPath) as
    | {
        numPassedTests: number;
        numFailedTests: number;
        numPendingTests: number;
        numTodoTests: number;
        testResults?: Array<{
          name: string;
          message?: string;
          assertionResults: Array<{ status: string; fullName: string; failureMessages?: string[] }>;
        }>;
      }
    | undefined;
  if (!report) {
    failures.push(`${stage}: no report (the run ended before writing one)`);
    return { stage, passed: 0, failed: 1, skipped: 0 };
  }
  if (status !== 0 && report.numFailedTests === 0)
    failures.push(
      `${stage}: exited ${status} with no test failed: an error outside the tests (vitest's "Unhandled Errors" in the stage's output)`,
    );
  for (const file of report.testResults ?? []) {
    const where = path.relative(process.cwd(), file.name);
    // A file that failed to load has no tests, only its message.
    if (file.assertionResults.length === 0 && file.message)
      failures.push(`${stage}: ${where}: ${firstLine(file.message)}`);
    for (const t of file.assertionResults)
      if (t.status === "failed")
        failures.push(`${stage}: ${where} › ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
  }
  return {
    stage,
    passed: report.numPassedTests,
    failed: report.numFailedTests + (status !== 0 && report.numFailedTests === 0 ? 1 : 0),
    skipped: report.numPendingTests + report.numTodoTests,
  };
}

console.log("\n== Playwright: API and browser ==");
rmSync("test-results/e2e.json", { force: true });
const playwrightStarted = Date.now();
const e2eStatus = await timed("playwright", () => run("npx", ["playwright", "test"]));
interface E2eSuite {
  file: string;
  suites?: E2eSuite[];
  specs?: Array<{
    title: string;
    line?: number;
    tests: Array<{
      status?: string;
      results: Array<{ duration: number; startTime?: string; parallelIndex?: number; error?: { message?: string } }>;
    }>;
  }>;
}
const e2e = readJson("test-results/e2e.json") as
  | {
      stats: { expected: number; unexpected: number; flaky: number; skipped: number };
      errors?: unknown[];
      suites?: E2eSuite[];
    }
  | undefined;
type E2eResult = NonNullable<E2eSuite["specs"]>[number]["tests"][number]["results"][number];

/** Every test result of the report, with the spec file it ran in. */
function* e2eResults(suites: E2eSuite[]): Generator<{ file: string; result: E2eResult }> {
  for (const suite of suites) {
    for (const spec of suite.specs ?? [])
      for (const t of spec.tests) for (const result of t.results) yield { file: suite.file, result };
    yield* e2eResults(suite.suites ?? []);
  }
}
// Per spec file, the sum of its tests' durations (two workers run them side by side).
const specSeconds = new Map<string, number>();
for (const { file, result } of e2eResults(e2e?.suites ?? []))
  specSeconds.set(file, (specSeconds.get(file) ?? 0) + result.duration / 1000);
printSlowest("slowest Playwright spec files (the sum of their tests' durations)", specSeconds);
for (const failure of e2eFailures(e2e?.suites ?? [])) failures.push(`playwright: ${failure}`);

/** The specs that failed or passed only on a retry, with the first error's first line. */
function* e2eFailures(suites: E2eSuite[]): Generator<string> {
  for (const suite of suites) {
    for (const spec of suite.specs ?? [])
      for (const t of spec.tests)
        if (t.status === "unexpected" || t.status === "flaky")
          yield `${suite.file}:${spec.line ?? "?"} › ${spec.title}${t.status === "flaky" ? " (flaky)" : ""}: ${firstLine(t.results.find((r) => r.error)?.error?.message)}`;
    yield* e2eFailures(suite.suites ?? []);
  }
}
printWorkerTimeline(e2e?.suites ?? []);

/**
 * Each Playwright worker slot's time: from the stage's start to its first
 * test (the servers' start), the time its tests took, and the rest of the
 * stage when it ran none (hooks, browser starts, waiting for a file). Where
 * the stage's wall goes beyond its tests' durations.
 */
function printWorkerTimeline(suites: E2eSuite[]): void {
  const slots = new Map<number, { first: number; last: number; busy: number }>();
  for (const { result: r } of e2eResults(suites)) {
    // A skipped test is reported on no worker (parallelIndex -1).
    if (r.startTime === undefined || r.parallelIndex === undefined || r.parallelIndex < 0) continue;
    const start = Date.parse(r.startTime);
    const slot = slots.get(r.parallelIndex) ?? { first: start, last: start, busy: 0 };
    slot.first = Math.min(slot.first, start);
    slot.last = Math.max(slot.last, start + r.duration);
    slot.busy += r.duration;
    slots.set(r.parallelIndex, slot);
  }
  console.log(
    "\nPlaywright workers (first test after the stage's start, tests' own time, time between and around them):",
  );
  for (const [index, slot] of [...slots].sort((a, b) => a[0] - b[0])) {
    const span = slot.last - slot.first;
    console.log(
      `  worker ${index}: first test at ${minutes((slot.first - playwrightStarted) / 1000)}, tests ${minutes(slot.busy / 1000)}, between them ${minutes((span - slot.busy) / 1000)}, done ${minutes((Date.now() - slot.last) / 1000)} before the stage ended`,
    );
  }
}
tallies.push(
  e2e
    ? {
        stage: "playwright",
        passed: e2e.stats.expected,
        // A flaky pass is still a failure to look at; a run that crashed before its tests counts as one failure.
        failed: e2e.stats.unexpected + e2e.stats.flaky + (e2eStatus !== 0 && e2e.stats.unexpected === 0 ? 1 : 0),
        skipped: e2e.stats.skipped,
      }
    : { stage: "playwright", passed: 0, failed: 1, skipped: 0 },
);

// After Playwright, whose demo server built the console: the framework
// suites run against live servers on that build (tests/live/servers.ts).
console.log("\n== vitest live: the framework suites against live servers on both databases ==");
rmSync("test-results/vitest-live.json", { force: true });
const liveStatus = await timed("vitest live", () =>
  run("npx", [
    "vitest",
    "run",
    "--project=live",
    "--reporter=default",
    "--reporter=json",
    "--outputFile.json=test-results/vitest-live.json",
  ]),
);
tallies.push(vitestTally("vitest live", liveStatus, "test-results/vitest-live.json"));
printSlowest("slowest live files", vitestFileSeconds("test-results/vitest-live.json"), 4);

if (failures.length > 0) {
  console.log("\n== failed ==");
  for (const failure of failures) console.log(failure.length > 400 ? `${failure.slice(0, 400)}…` : failure);
}

console.log("\n== summary ==");
for (const t of tallies)
  console.log(
    `${t.stage.padEnd(12)} ${t.passed} passed, ${t.failed} failed${t.skipped ? `, ${t.skipped} skipped` : ""}`,
  );
// Where the time went: each stage's wall time, and the CPU its processes used (CPU / wall = cores kept busy).
console.log("\n== time ==");
for (const t of timings)
  console.log(
    `${t.stage.padEnd(14)} ${minutes(t.seconds).padStart(12)}${t.cpuSeconds === null ? "" : `   CPU ${minutes(t.cpuSeconds)} (${(t.cpuSeconds / t.seconds).toFixed(1)} cores)`}`,
  );
console.log(`${"total".padEnd(14)} ${minutes((performance.now() - suiteStarted) / 1000).padStart(12)}`);
// 2026-12-04 19:30, this kind of machine idle: 0.8-1.1 s (the start's figure is the higher, before the JIT warms).
console.log(
  `reference work: ${referenceAtStart} ms at the start, ${referenceWorkMs()} ms at the end (this machine's speed)\n`,
);
const passed = tallies.reduce((n, t) => n + t.passed, 0);
const failed = tallies.reduce((n, t) => n + t.failed, 0);
const skipped = tallies.reduce((n, t) => n + t.skipped, 0);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 ? 1 : 0);
