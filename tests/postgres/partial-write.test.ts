/**
 * "Database connection killed mid-transaction leaves no partial state"
 * (issue 3), against a real PostgreSQL server.
 *
 * Each scenario makes one engine write stall half-way: a second session
 * holds a lock that the write's *second* statement needs, so the write's
 * transaction sits open with its first statement done. The test proves that
 * first half is really written (the row it wrote is locked by an open
 * transaction: SELECT … FOR UPDATE NOWAIT fails), then kills the connection
 * (pg_terminate_backend) or the whole process holding it (SIGKILL). After
 * that, every table of the database must hold exactly what it held before —
 * compared row by row through a digest of every table — and the same call
 * made again must succeed.
 *
 * Why this catches a write split into two transactions: the first half
 * would have committed before the stall, so the NOWAIT probe would find the
 * row unlocked and the digest would differ (a task moved with no execution,
 * an execution settled with the task left behind, a task version with no
 * transition row). Killing a connection that has nothing uncommitted proves
 * nothing, hence the probe before every kill.
 */
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkConsistency } from "@/lib/use-cases/monitor/consistency-check";
import { formatConsistencyReport } from "@/lib/use-cases/monitor/consistency-report";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { connectorsFor, successMadeAt } from "@/tests/helpers/effects";
import { sandbox } from "@/tests/sandbox/helpers";
import type { PartialWriteCommand, PartialWriteMessage } from "./partial-write-worker";
import { DEFAULT_TENANT_ID, tenantConnectionOptions } from "@/lib/db/tenant-sessions";

const agent: Actor = { identity: "spiffe://verity.test/agent/partial-write", kind: "agent" };
const refund = { amount_cents: 1200, currency: "usd", charge_id: "ch_partial", customer_id: "cus_partial" };
const workerScript = path.join(import.meta.dirname, "partial-write-worker.ts");
/** How long a stalled write may take to show up in pg_stat_activity before the test gives up (a hang fails, a slow machine does not). */
const SHOW_UP_MS = 30_000;

let database: PostgresTestDatabase;
/** A session of the test's own, outside the code under test: it looks, probes and kills. */
let observer: pg.Client;

beforeAll(async () => {
  database = await createPostgresTestDatabase({ poolSize: 4 });
  observer = new pg.Client({ connectionString: database.url });
  await observer.connect();
});
afterAll(async () => {
  await observer?.end();
  await database?.drop();
});

/** A v2 agent task in RUNNING. */
async function runningTask(): Promise<{ id: string; version: number }> {
  const { task } = await createTask(database.db, { workflow: "agent-task", intent_id: "partial-write" }, agent);
  let version = task.version;
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = (await transitionTask(database.db, task.id, { expected_version: version, to }, agent)).task.version;
  return { id: task.id, version };
}

/** Every row of every table, as one digest per table: "nothing changed" means these are equal. */
async function everyTable(): Promise<Record<string, string>> {
  const { rows: tables } = await observer.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations' ORDER BY table_name`,
  );
  const digests: Record<string, string> = {};
  for (const { name } of tables) {
    const { rows } = await observer.query<{ n: number; digest: string }>(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) AS digest FROM "${name}" t`,
    );
    digests[name] = `${rows[0]?.n} rows, ${rows[0]?.digest}`;
  }
  return digests;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await observer.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params);
  return rows[0]?.n ?? -1;
}

async function taskRow(taskId: string): Promise<{ version: number; status: string; state: unknown }> {
  const { rows } = await observer.query<{ version: number; status: string; state: unknown }>(
    "SELECT version, status, state FROM tasks WHERE id = $1",
    [taskId],
  );
  if (!rows[0]) throw new Error(`task ${taskId} is gone`);
  return rows[0];
}

/** A session that takes `lockSql` in an open transaction and keeps it until released. */
async function holdLock(
  lockSql: string,
  params: unknown[] = [],
): Promise<{ pid: number; release: () => Promise<void> }> {
  const session = new pg.Client({
    connectionString: database.url,
    options: tenantConnectionOptions(DEFAULT_TENANT_ID),
  });
  await session.connect();
  const { rows } = await session.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  await session.query("BEGIN");
  await session.query(lockSql, params);
  let released = false;
  return {
    pid: rows[0]!.pid,
    release: async () => {
      if (released) return;
      released = true;
      await session.query("ROLLBACK");
      await session.end();
    },
  };
}

/** The backend waiting on `blockerPid`'s lock: the stalled write. */
async function stalledBehind(blockerPid: number): Promise<{ pid: number; query: string }> {
  const deadline = Date.now() + SHOW_UP_MS;
  for (;;) {
    const { rows } = await observer.query<{ pid: number; query: string }>(
      "SELECT pid, query FROM pg_stat_activity WHERE datname = current_database() AND $1 = ANY(pg_blocking_pids(pid))",
      [blockerPid],
    );
    if (rows.length > 1)
      throw new Error(`more than one backend waits on the lock: ${rows.map((r) => r.query).join(" | ")}`);
    if (rows[0]) return rows[0];
    if (Date.now() > deadline) throw new Error(`no write stalled behind the lock within ${SHOW_UP_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The first half of the write is in the database, uncommitted: the row it
 * wrote is locked by an open transaction, and what others read is still
 * the committed row.
 */
async function expectWrittenButUncommitted(table: "tasks" | "executions", id: string): Promise<void> {
  const probe = await observer.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE NOWAIT`, [id]).then(
    () => "not locked",
    (error: { code?: string }) => error.code,
  );
  expect(probe, `${table} row ${id} should be locked by the stalled write's open transaction`).toBe("55P03");
}

async function terminate(pid: number): Promise<void> {
  const { rows } = await observer.query<{ ok: boolean }>("SELECT pg_terminate_backend($1) AS ok", [pid]);
  expect(rows[0]?.ok).toBe(true);
}

/** Settles to the error the call failed with; a call that succeeds is a failure of the test. */
function failureOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => new Error("the call succeeded although its connection was killed mid-transaction"),
    (error: unknown) => error,
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error
    ? `${error.message} ${String((error as { cause?: unknown }).cause ?? "")}`
    : String(error);
}

/**
 * Runs `write` while another session holds `lock`, waits until the write
 * stalls on it, checks that the write's first half (`written`) is in the
 * database uncommitted, and terminates the write's connection: the write
 * must fail with that termination.
 */
async function killWhileStalled(options: {
  lock: string;
  lockParams?: unknown[];
  /** What the stalled statement touches: it is the write's second half. */
  stallsOn: RegExp;
  written: { table: "tasks" | "executions"; id: string };
  write: () => Promise<unknown>;
}): Promise<void> {
  const blocker = await holdLock(options.lock, options.lockParams);
  const failed = failureOf(options.write());
  try {
    const stalled = await stalledBehind(blocker.pid);
    expect(stalled.query).toMatch(options.stallsOn);
    await expectWrittenButUncommitted(options.written.table, options.written.id);
    await terminate(stalled.pid);
    expect(messageOf(await failed)).toMatch(/terminat/i);
  } finally {
    await blocker.release();
  }
}

describe("a connection killed mid-transaction leaves no partial state", () => {
  it("recordIntent: killed after the task's CAS move, before the execution row; the retry records the intent", async () => {
    const task = await runningTask();
    const before = await everyTable();
    const taskBefore = await taskRow(task.id);
    const intent = {
      tool_call_id: "refund-1",
      tool: "payments.refund",
      request: refund,
      expected_version: task.version,
    };

    // The intent's INSERT INTO executions waits for this lock; its task UPDATE has run by then.
    await killWhileStalled({
      lock: "LOCK TABLE executions IN EXCLUSIVE MODE",
      stallsOn: /executions/,
      written: { table: "tasks", id: task.id },
      write: () => recordIntent(database.db, task.id, intent, agent),
    });

    expect(await taskRow(task.id)).toEqual(taskBefore);
    expect(await count("transitions WHERE task_id = $1 AND to_version > $2", [task.id, task.version])).toBe(0);
    expect(await count("executions WHERE task_id = $1", [task.id])).toBe(0);
    expect(
      await count("execution_events e JOIN executions x ON x.id = e.execution_id WHERE x.task_id = $1", [task.id]),
    ).toBe(0);
    expect(await count("outbox_messages WHERE task_id = $1", [task.id])).toBe(0);
    expect(await everyTable()).toEqual(before);

    const retry = await recordIntent(database.db, task.id, intent, agent);
    expect(retry).toMatchObject({
      kind: "proceed",
      execution: { status: "INTENT_RECORDED", attempt: 1 },
      task: { status: "WAITING_FOR_TOOL", version: task.version + 1 },
    });
  });

  it("recordOutcome: killed after the execution moved, before the task's; the retry records the outcome and moves the task", async () => {
    const task = await runningTask();
    const intent = await recordIntent(
      database.db,
      task.id,
      { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: task.version },
      agent,
    );
    if (intent.kind !== "proceed") throw new Error("expected a new intent");
    const sent = await markSent(database.db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
    // The refund is made at a provider, which the engine asks before it records the success.
    const deps = connectorsFor((await sandbox()).url);
    const report = await successMadeAt(deps, await getExecutionRowOrThrow(database.db, sent.id));
    const before = await everyTable();
    const taskBefore = await taskRow(task.id);

    // The task's CAS statement needs this table; the execution's UPDATE and its event have run by then.
    await killWhileStalled({
      lock: "LOCK TABLE transitions IN EXCLUSIVE MODE",
      stallsOn: /tasks|transitions/,
      written: { table: "executions", id: sent.id },
      write: () => recordOutcome(database.db, sent.id, report, agent, deps),
    });

    expect(await taskRow(task.id)).toEqual(taskBefore);
    expect(taskBefore.status).toBe("WAITING_FOR_TOOL");
    const { rows } = await observer.query<{ status: string; version: number }>(
      "SELECT status, version FROM executions WHERE id = $1",
      [sent.id],
    );
    expect(rows).toEqual([{ status: "SENT", version: sent.version }]);
    expect(await count("execution_events WHERE execution_id = $1 AND to_status = 'SUCCEEDED'", [sent.id])).toBe(0);
    expect(await count("outbox_messages WHERE task_id = $1", [task.id])).toBe(0);
    expect(await everyTable()).toEqual(before);

    const retry = await recordOutcome(database.db, sent.id, report, agent, deps);
    expect(retry).toMatchObject({
      execution: { status: "SUCCEEDED" },
      task: { status: "RUNNING", version: taskBefore.version + 1 },
      leaseConflict: null,
    });
  });

  // A plain move is one CAS statement (task UPDATE and transition INSERT in
  // one CTE); a move across a checkpoint boundary (escalation) is that
  // statement and the checkpoint in one transaction (lib/use-cases/tasks/transition-task.ts).
  it.each([
    { path: "a plain move, one statement", to: "FAILED" },
    { path: "a move at a checkpoint boundary, with its checkpoint", to: "WAITING_FOR_HUMAN" },
  ])(
    "transitionTask ($path): killed after the task UPDATE, before its transition row; the retry applies it once",
    async ({ to }) => {
      const task = await runningTask();
      const other = await runningTask();
      const move = {
        expected_version: task.version,
        to,
        reason: "killed mid-write",
        transition_id: `tr-partial-${task.id}`,
      };
      const before = await everyTable();
      const taskBefore = await taskRow(task.id);

      // An uncommitted row holding the same transition id (on another task, so
      // the task row itself is not locked by the blocker): the CTE's INSERT
      // waits on that id's uniqueness after its UPDATE of the task has run.
      await killWhileStalled({
        lock: `INSERT INTO transitions (id, task_id, from_version, to_version, from_status, to_status, actor, actor_kind, reason, patch, state_after, request_digest)
             VALUES ($1, $2, 1, 999, 'RUNNING', 'RUNNING', 'test', 'agent', 'blocker', '{}', '{}', 'blocker')`,
        lockParams: [move.transition_id, other.id],
        stallsOn: /transitions/,
        written: { table: "tasks", id: task.id },
        write: () => transitionTask(database.db, task.id, move, agent),
      });

      expect(await taskRow(task.id)).toEqual(taskBefore);
      expect(await count("transitions WHERE task_id = $1 AND to_version > $2", [task.id, task.version])).toBe(0);
      expect(await everyTable()).toEqual(before);

      const retry = await transitionTask(database.db, task.id, move, agent);
      expect(retry).toMatchObject({ replayed: false, task: { status: to, version: task.version + 1 } });
      expect(await count("transitions WHERE id = $1", [move.transition_id])).toBe(1);
    },
  );
});

describe("the process holding the transaction is SIGKILLed", () => {
  it("recordIntent in a worker killed while its transaction is open: PostgreSQL rolls it back, nothing is left, the retry succeeds", async () => {
    const task = await runningTask();
    const before = await everyTable();
    const taskBefore = await taskRow(task.id);
    const worker = fork(workerScript, [], {
      execArgv: ["--import", "tsx"],
      env: { ...process.env, VERITY_WORKER_DATABASE_URL: database.url },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      worker.once("exit", (_code, signal) => resolve(signal)),
    );
    const blocker = await holdLock("LOCK TABLE executions IN EXCLUSIVE MODE");
    let backendPid: number | undefined;
    try {
      const ready = await nextMessage(worker);
      if (ready.type !== "ready") throw new Error(`worker: ${JSON.stringify(ready)}`);
      backendPid = ready.backendPid;
      worker.send({
        type: "record-intent",
        taskId: task.id,
        expectedVersion: task.version,
        toolCallId: "refund-1",
        request: refund,
      } satisfies PartialWriteCommand);
      const stalled = await stalledBehind(blocker.pid);
      expect(stalled.pid).toBe(backendPid);
      await expectWrittenButUncommitted("tasks", task.id);

      worker.kill("SIGKILL");
      expect(await exited).toBe("SIGKILL");
      // The backend does not notice a dead client while it waits on a lock:
      // the uncommitted move is still there, in nobody's hands.
      await expectWrittenButUncommitted("tasks", task.id);
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) worker.kill("SIGKILL");
      await blocker.release();
    }
    // Once it can go on, it finds its client gone and rolls back.
    await backendGone(backendPid);

    expect(await taskRow(task.id)).toEqual(taskBefore);
    expect(await count("executions WHERE task_id = $1", [task.id])).toBe(0);
    expect(await everyTable()).toEqual(before);

    const retry = await recordIntent(
      database.db,
      task.id,
      { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: task.version },
      agent,
    );
    expect(retry).toMatchObject({ kind: "proceed", task: { status: "WAITING_FOR_TOOL", version: task.version + 1 } });
  });
});

describe("after every kill above", () => {
  it("the consistency checker finds every log gapless, every audit chain intact and nothing else amiss", async () => {
    const report = await checkConsistency(database.db);
    expect(report.findings, formatConsistencyReport(report)).toEqual([]);
    expect(report.checks.transition_logs.examined).toBeGreaterThan(0);
  });
});

function nextMessage(child: ChildProcess): Promise<PartialWriteMessage> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`worker exited with ${code} before answering`));
    child.once("exit", onExit);
    child.once("message", (message: PartialWriteMessage) => {
      child.off("exit", onExit);
      resolve(message);
    });
  });
}

async function backendGone(pid: number | undefined): Promise<void> {
  const deadline = Date.now() + SHOW_UP_MS;
  while ((await count("pg_stat_activity WHERE pid = $1", [pid ?? -1])) > 0) {
    if (Date.now() > deadline)
      throw new Error(`backend ${pid} of the killed worker is still there after ${SHOW_UP_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
