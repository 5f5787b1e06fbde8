import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { expect } from "vitest";
import { verifyPassword } from "@/lib/core/passwords";
import { isSealed } from "@/lib/core/envelope-encryption";
import type { Db } from "@/lib/db/client";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { demoUsers } from "@/lib/config/demo-accounts";
import { bundledScript } from "@/tests/helpers/bundled-script";
import { startPostgresHint, testDatabaseUrl } from "@/tests/helpers/postgres";

/**
 * The startup tests' tools: start tests/startup/worker.ts (the database
 * phase of `npm start`) as a real process, and read a database back as a
 * comparable snapshot — schema, migration history and seeded content, with
 * what legitimately differs between two runs (timestamps, generated row ids
 * of users and tokens, password salts) left out.
 */
const root = path.resolve(import.meta.dirname, "..", "..");
const workerScript = path.join(import.meta.dirname, "worker.ts");
/**
 * The worker bundled once per test file and started by plain node rather
 * than through tsx (tests/helpers/bundled-script.ts): the tests start dozens,
 * and tsx's loader and compiling were about a fifth of each start's CPU.
 * `--liftoff-only` (V8's baseline WebAssembly compiler, no tier-up) saves as
 * much again for a process that lives seconds; tests/postgres/chaos.test.ts
 * starts its workers the same way.
 */
function workerCommand(): string[] {
  return ["--liftoff-only", bundledScript(workerScript, "startup-worker")];
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: string[];
  out: string;
}

export interface RunningWorker {
  /** Resolves at the first output line matching `pattern` (the process may already have died: then rejects). */
  waitForLine(pattern: RegExp): Promise<string>;
  kill(): void;
  exited: Promise<WorkerExit>;
}

/** `database` is `postgres:<url>` or `pglite:<folder>`; `env` adds the worker's VERITY_TEST_* settings. */
export function startWorker(database: string, env: Record<string, string> = {}): RunningWorker {
  const child = spawn(process.execPath, workerCommand(), {
    cwd: root,
    env: { ...process.env, VERITY_TEST_DATABASE: database, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void; reject: (error: Error) => void }> = [];
  const lines: string[] = [];
  let pendingLine = "";
  const onLine = (line: string) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.pattern.test(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  };
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    pendingLine += chunk.toString();
    const parts = pendingLine.split("\n");
    pendingLine = parts.pop() ?? "";
    for (const line of parts) onLine(line);
  });
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<WorkerExit>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (pendingLine) onLine(pendingLine);
      for (const w of waiters.splice(0))
        w.reject(new Error(`the worker exited (${signal ?? code}) before printing ${w.pattern}:\n${out}`));
      resolve({ code, signal, lines, out });
    });
  });
  return {
    waitForLine: (pattern) => {
      const seen = lines.find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      if (child.exitCode !== null || child.signalCode !== null)
        return Promise.reject(new Error(`the worker already exited before printing ${pattern}:\n${out}`));
      return new Promise((resolve, reject) => waiters.push({ pattern, resolve, reject }));
    },
    kill: () => child.kill("SIGKILL"),
    exited,
  };
}

export function runWorker(database: string, env: Record<string, string> = {}): Promise<WorkerExit> {
  return startWorker(database, env).exited;
}

/** A start that must succeed; returns what it applied and whether it seeded. */
export async function startCleanly(
  database: string,
  env: Record<string, string> = {},
): Promise<{ applied: string[]; seededNow: boolean }> {
  const exit = await runWorker(database, env);
  expect(exit.code, exit.out).toBe(0);
  const done = exit.lines.find((l) => l.startsWith("done "));
  expect(done, exit.out).toBeDefined();
  return JSON.parse(done!.slice("done ".length)) as { applied: string[]; seededNow: boolean };
}

/**
 * Kills one start at each point in turn, on the same database. Every start
 * after the first is the "next start" of the one killed before it: it must
 * recover from whatever that kill left and get as far as its own point (a
 * start that fails, or finishes without reaching its point, fails the
 * test). The last start runs to the end and must succeed.
 */
export async function killAtEachPoint(
  database: string,
  points: readonly string[],
  env: Record<string, string> = {},
): Promise<{ applied: string[]; seededNow: boolean }> {
  for (const point of points) {
    const exit = await runWorker(database, { ...env, VERITY_TEST_KILL_AT: point });
    expect({ point, signal: exit.signal, last: exit.lines.at(-1) }, exit.out).toEqual({
      point,
      signal: "SIGKILL",
      last: `killed at ${point}`,
    });
  }
  return startCleanly(database, env);
}

type Query = <T>(sql: string) => Promise<T[]>;

/** Everything that makes two databases "the same" here, as plain data for toEqual. */
export async function snapshotDatabase(query: Query): Promise<Record<string, unknown>> {
  // Definitions name their schema (public., or a scratch schema): compared without it.
  const [{ schema: namespace } = { schema: "public" }] = await query<{ schema: string }>(
    "SELECT current_schema()::text AS schema",
  );
  const rows = async (sql: string) =>
    (await query<Record<string, unknown>>(sql)).map((r) => JSON.stringify(r).replaceAll(`${namespace}.`, ""));
  // Casts to text: information_schema's domains and the `name` type are not types every driver adapter reads.
  const schema = {
    columns: await rows(
      `SELECT table_name::text, column_name::text, data_type::text, udt_name::text, is_nullable::text, column_default::text, character_maximum_length::int AS length
         FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
    ),
    indexes: await rows(`SELECT indexdef::text FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexdef`),
    constraints: await rows(
      `SELECT conrelid::regclass::text AS rel, conname::text, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
         JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = current_schema() ORDER BY 1, 2`,
    ),
    enums: await rows(
      `SELECT t.typname::text, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
         JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = current_schema() GROUP BY t.typname ORDER BY 1`,
    ),
    functions: await rows(
      `SELECT p.proname::text, pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = current_schema() ORDER BY 1, 2`,
    ),
    triggers: await rows(
      `SELECT tgname::text, pg_get_triggerdef(t.oid) AS def FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE NOT t.tgisinternal AND n.nspname = current_schema() ORDER BY 1, 2`,
    ),
    views: await rows(`SELECT viewname::text, definition FROM pg_views WHERE schemaname = current_schema() ORDER BY 1`),
  };
  // Every migration exactly once, finished, in the format `prisma migrate deploy` writes.
  const history = await rows(
    `SELECT migration_name::text, checksum::text, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS rolled_back, logs, applied_steps_count
       FROM _prisma_migrations ORDER BY migration_name, rolled_back_at NULLS LAST`,
  );
  // A value sealed at rest (docs/encryption.md) differs from one database to the next (its key, its
  // nonce): compared as sealed, in its place. Which values are sealed, and everything else, must match.
  const sealedAsPlaceholder = (json: unknown): unknown =>
    isSealed(json)
      ? "(sealed)"
      : Array.isArray(json)
        ? json.map(sealedAsPlaceholder)
        : json !== null && typeof json === "object"
          ? Object.fromEntries(Object.entries(json).map(([k, v]) => [k, sealedAsPlaceholder(v)]))
          : json;
  const without = (json: unknown, key: string) => {
    const copy = { ...(sealedAsPlaceholder(json) as Record<string, unknown>) };
    delete copy[key];
    return copy;
  };
  const content = {
    users: await rows(`SELECT username, display_name, role FROM users ORDER BY username`),
    tokens: await rows(
      `SELECT name, identity, role, token_hash, token_prefix, revoked_at FROM api_tokens ORDER BY name`,
    ),
    tasks: (
      await query<Record<string, unknown>>(
        `SELECT id, workflow_name, workflow_version, workflow_digest, status, version, intent_id, created_by, updated_by, state FROM tasks ORDER BY id`,
      )
    ).map((r) => JSON.stringify({ ...r, state: without(r.state, "updated_at") })),
    transitions: (
      await query<Record<string, unknown>>(
        `SELECT id, task_id, from_version, to_version, from_status, to_status, actor, actor_kind, reason, patch, request_digest, state_after
           FROM transitions ORDER BY task_id, to_version`,
      )
    )
      // A creation's transition id is createTask's own (random); every other is the seed's fixed one.
      .map((r) =>
        JSON.stringify({
          ...r,
          id: r.from_version === null ? "(creation)" : r.id,
          patch: sealedAsPlaceholder(r.patch),
          state_after: without(r.state_after, "updated_at"),
        }),
      ),
    checkpoints: await rows(
      `SELECT task_id, state_version, trigger, key_id, created_by FROM checkpoints ORDER BY task_id, state_version, trigger`,
    ),
    // A task's own chain entry by entry; other chains (a checkpoint's, named by its random id) counted per task and action.
    audit: await rows(
      `SELECT stream, count(*)::int AS entries, array_agg(action || ' ' || subject_id ORDER BY seq) AS entries_in_order
         FROM audit_entries WHERE stream LIKE 'task:%' GROUP BY stream
       UNION ALL
       SELECT 'other:' || coalesce(task_id, '-') || ':' || action, count(*)::int, NULL::text[] FROM audit_entries WHERE stream NOT LIKE 'task:%' GROUP BY task_id, action
       ORDER BY 1`,
    ),
    // A seed writes none of these; a replayed step must not record a refused write either.
    untouched: await rows(
      `SELECT (SELECT count(*)::int FROM executions) AS executions, (SELECT count(*)::int FROM reviews) AS reviews,
              (SELECT count(*)::int FROM write_conflicts) AS write_conflicts, (SELECT count(*)::int FROM divergence_alerts) AS alerts`,
    ),
  };
  return { schema, history, content };
}

/** The checks a snapshot cannot express: passwords that work, audit chains that verify. */
export async function expectSeedUsable(db: Db, query: Query): Promise<void> {
  const hashes = await query<{ username: string; password_hash: string }>(`SELECT username, password_hash FROM users`);
  for (const user of demoUsers) {
    const row = hashes.find((h) => h.username === user.username);
    expect(row, user.username).toBeDefined();
    expect(await verifyPassword(user.password, row!.password_hash), user.username).toBe(true);
  }
  const chains = await verifyAuditChains(db);
  expect(chains.breaks).toEqual([]);
  expect(chains.ok).toBe(true);
}

/** Raw SQL through a Prisma client: the same reader for every database compared. */
export function queryOf(db: Db): Query {
  return <T>(sql: string) => db.$queryRawUnsafe<T[]>(sql);
}

/** An empty database on the test server (no migrations: the first start's own job). Always call `drop()`. */
export async function createEmptyPostgresDatabase(): Promise<{ url: string; spec: string; drop(): Promise<void> }> {
  const name = `verity_startup_${randomBytes(6).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: testDatabaseUrl(), connectionTimeoutMillis: 5_000 });
    await client.connect().catch((error: Error) => {
      throw new Error(`PostgreSQL is not reachable (${error.message}). ${startPostgresHint}`);
    });
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  // FORCE: a SIGKILLed worker's connection may not be gone yet.
  return {
    url: url.toString(),
    spec: `postgres:${url.toString()}`,
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
