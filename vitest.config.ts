import path from "node:path";
import { defineConfig } from "vitest/config";

/** PostgreSQL files that must run alone (the "postgres-contention" project below). */
const contentionFiles = [
  "tests/postgres/chaos.test.ts",
  "tests/postgres/concurrency.test.ts",
  "tests/postgres/failover.test.ts",
  "tests/postgres/failover-identity.test.ts",
  "tests/postgres/monitor-takeover.test.ts",
  "tests/postgres/partial-write.test.ts",
  "tests/postgres/replication-failover.test.ts",
  "tests/postgres/startup-kill.test.ts",
  "tests/postgres/worker-lookup.test.ts",
];

/**
 * V8's baseline WebAssembly compiler only, for the worker processes of the
 * unit+pglite and postgres projects, as the CLI (package.json's `verity`
 * script) and the bundled test workers already run. Every test file is a
 * process of its own, and each compiled PGlite's WebAssembly (and Prisma's
 * query compiler) anew, optimizing tier included: a file's first database
 * open was 4.2 s of CPU, 2.5 s with Liftoff only, later opens about the same
 * either way. Measured on the same files back to back: 12 tests/db files
 * 170 s -> 127 s of CPU (vitest and its workers; 168 s on a second default
 * run), 26 files of tests/frameworks, tests/sandbox, tests/sdk, lib/core and
 * programs/sandbox 127 s -> 100 s, the postgres project 142 s -> 103 s (the
 * client side; the server's own about the same).
 * Not for the contention files, which race clocks and were not measured with it.
 */
const liftoffOnly = ["--liftoff-only"];

export default defineConfig({
  resolve: {
    // The examples import the SDK by its package name (packages/verity-sdk), as a user's project does.
    alias: [
      { find: /^@verity\/sdk$/, replacement: path.resolve(import.meta.dirname, "sdk/index.ts") },
      { find: /^@verity\/sdk\/langgraph$/, replacement: path.resolve(import.meta.dirname, "sdk/langgraph/index.ts") },
      {
        find: /^@verity\/sdk\/(ai-sdk|langchain|openai-agents)$/,
        replacement: path.resolve(import.meta.dirname, "sdk/frameworks/$1.ts"),
      },
      { find: "@", replacement: path.resolve(import.meta.dirname) },
    ],
  },
  test: {
    exclude: ["node_modules", "e2e", ".next", ".data"],
    environment: "node",
    // Migrates one PGlite database per run and hands its tarball to every
    // test file (tests/helpers/pglite.ts): ~1 s per file instead of ~10 s.
    globalSetup: ["tests/helpers/global-setup.ts"],
    // scrypt at its interactive floor (2^14) for the hashes the tests make:
    // hundreds of sign-ins at OWASP's 2^17 were minutes of the suite's CPU.
    // lib/core/passwords.test.ts checks the default itself.
    env: { VERITY_PASSWORD_SCRYPT_N: "16384" },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Database tests each open their own PGlite or PostgreSQL database; on a
    // 2-core machine more parallel files only thrash.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "unit+pglite",
          include: ["lib/**/*.test.ts", "programs/**/*.test.ts", "sdk/**/*.test.ts", "tests/**/*.test.ts"],
          exclude: ["tests/postgres/**", "tests/live/**"],
          execArgv: liftoffOnly,
        },
      },
      {
        // Against live servers (tests/live/servers.ts: `npm start`'s script on
        // both databases, on the production build). Not in a plain `vitest
        // run`: scripts/run-tests.ts runs it after the Playwright stage has
        // built, as `vitest run --project live`.
        extends: true,
        test: {
          name: "live",
          include: ["tests/live/**/*.test.ts"],
          // The official LangGraph suite calls describe/it/expect as globals.
          globals: true,
          globalSetup: ["tests/live/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The PostgreSQL files that run in their own process and judge
        // outcomes, not timing: beside the unit and PGlite files, on the
        // same two workers. Serially after those, they kept one core busy
        // while the other waited (docs/architecture.md, "Where the suite's time goes").
        extends: true,
        test: {
          name: "postgres",
          include: ["tests/postgres/**/*.test.ts"],
          exclude: contentionFiles,
          execArgv: liftoffOnly,
        },
      },
      {
        // After everything else, one file at a time: these start worker
        // processes by the dozen, kill them at chosen moments, or wait for a
        // lock to show up within a deadline; they measure contention, not
        // the other test files. A new file that starts processes or races
        // a clock belongs here.
        extends: true,
        test: {
          name: "postgres-contention",
          include: contentionFiles,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
