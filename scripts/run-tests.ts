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
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { ensureTestPrerequisites } from "./test-prerequisites";

interface Tally {
  stage: string;
  passed: number;
  failed: number;
  skipped: number;
}

const tallies: Tally[] = [];
mkdirSync("test-results", { recursive: true });

function run(command: string, args: string[]): number {
  const result = spawnSync(command, args, { stdio: "inherit", env: process.env });
  return result.status ?? 1;
}

function readJson(path: string): unknown {
  try {
    return existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : undefined;
  } catch {
    return undefined;
  }
}

// What the stages need besides node_modules (Chromium, a PostgreSQL server),
// brought here so that `npm install && npm test` is the whole recipe.
console.log("\n== prerequisites ==");
for (const p of await ensureTestPrerequisites()) {
  console.log(`${p.ok ? "ok  " : "FAIL"} ${p.name}: ${p.detail}`);
  if (!p.ok) tallies.push({ stage: p.name, passed: 0, failed: 1, skipped: 0 });
}

// The static checks, each the package script of the same name so that a
// developer runs exactly what the test command runs. Each counts as one test.
const checks: Array<{ stage: string; script: string; why: string }> = [
  { stage: "typecheck", script: "typecheck", why: "tests included: a misspelled fixture key must not compile" },
  {
    stage: "lint",
    script: "lint",
    why: "what tsc does not catch: a promise nobody awaits, a switch that forgets a case, React's and Next's rules (eslint.config.mjs)",
  },
  {
    stage: "format",
    script: "check:format",
    why: "one layout for every file (Prettier, .prettierrc.json); `npm run format` applies it",
  },
  {
    stage: "architecture",
    script: "check:architecture",
    why: "imports flow down the layers and never in a circle (.dependency-cruiser.cjs)",
  },
  { stage: "dead-code", script: "check:dead-code", why: "no unused file, export or dependency (knip.json)" },
];
for (const check of checks) {
  console.log(`\n== ${check.stage}: ${check.why} ==`);
  const status = run("npm", ["run", "-s", check.script]);
  tallies.push({ stage: check.stage, passed: status === 0 ? 1 : 0, failed: status === 0 ? 0 : 1, skipped: 0 });
}

console.log("\n== vitest: unit, embedded database, PostgreSQL ==");
rmSync("test-results/vitest.json", { force: true });
const vitestStatus = run("npx", [
  "vitest",
  "run",
  "--project=unit+pglite",
  "--project=postgres",
  "--reporter=default",
  "--reporter=json",
  "--outputFile.json=test-results/vitest.json",
]);
tallies.push(vitestTally("vitest", vitestStatus, "test-results/vitest.json"));

/** A vitest run's counts from its JSON report; a run that crashed before its tests counts as one failure. */
function vitestTally(stage: string, status: number, reportPath: string): Tally {
  const report = readJson(reportPath) as
    { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number } | undefined;
  if (!report) return { stage, passed: 0, failed: 1, skipped: 0 };
  return {
    stage,
    passed: report.numPassedTests,
    failed: report.numFailedTests + (status !== 0 && report.numFailedTests === 0 ? 1 : 0),
    skipped: report.numPendingTests + report.numTodoTests,
  };
}

console.log("\n== Playwright: API and browser ==");
rmSync("test-results/e2e.json", { force: true });
const e2eStatus = run("npx", ["playwright", "test"]);
const e2e = readJson("test-results/e2e.json") as
  { stats: { expected: number; unexpected: number; flaky: number; skipped: number }; errors?: unknown[] } | undefined;
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
const liveStatus = run("npx", [
  "vitest",
  "run",
  "--project=live",
  "--reporter=default",
  "--reporter=json",
  "--outputFile.json=test-results/vitest-live.json",
]);
tallies.push(vitestTally("vitest live", liveStatus, "test-results/vitest-live.json"));

console.log("\n== summary ==");
for (const t of tallies)
  console.log(
    `${t.stage.padEnd(12)} ${t.passed} passed, ${t.failed} failed${t.skipped ? `, ${t.skipped} skipped` : ""}`,
  );
const passed = tallies.reduce((n, t) => n + t.passed, 0);
const failed = tallies.reduce((n, t) => n + t.failed, 0);
const skipped = tallies.reduce((n, t) => n + t.skipped, 0);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 ? 1 : 0);
