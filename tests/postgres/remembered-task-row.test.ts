import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "@/lib/db/client";
import { performEffect } from "@/lib/connectors/effects";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";
import { agent, connectorsFor, refund, runningTask as runningTaskOn } from "@/tests/helpers/effects";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { captureStatements } from "@/tests/helpers/statement-plans";

/**
 * transitionTask remembers the row it wrote (lib/stores/tasks/task-store.ts)
 * and builds the task's next change on it without reading: one statement
 * per change for an agent driving its task through one server. The swap
 * requires the very row version it remembers, so a row anyone changed
 * since (another server, or any write at all) is read afresh, never
 * overwritten with what this process believed.
 */
let pgdb: PostgresTestDatabase;
let otherServer: DatabaseHandle;
let provider: Sandbox;
beforeAll(async () => {
  pgdb = await createPostgresTestDatabase({ poolSize: 4 });
  provider = await startSandbox({ port: 0, host: "127.0.0.1" });
  // A second server process on the same database: its own pools, so nothing remembered is shared.
  otherServer = openDatabase({ kind: "postgres", url: pgdb.url }, { poolSize: 2 });
});
afterAll(async () => {
  await provider?.close();
  await otherServer?.close();
  await pgdb?.drop();
});

const hops = (n: number) => ({ patch: { budget: { hops_used: n } } });

/** A task in RUNNING whose last change this server (pgdb.db) made, so it remembers the row. */
const runningTask = () => runningTaskOn(pgdb.db);

describe("the row a server wrote last", () => {
  it("carries the next change without a read: one statement", async () => {
    const task = await runningTask();
    const { result, sent } = await captureStatements(() =>
      transitionTask(pgdb.db, task.id, { expected_version: task.version, ...hops(1) }, agent),
    );
    expect(result.task.version).toBe(task.version + 1);
    expect(sent.map((s) => s.text.replace(/\s+/g, " ").trim().slice(0, 30))).toEqual([
      "WITH updated AS ( UPDATE tasks",
    ]);
    expect((await getTaskOrThrow(pgdb.db, task.id)).state.budget.hops_used).toBe(1);
  });

  it("is not built upon once another server changed the task: that change stands, the stale caller gets version_conflict", async () => {
    const task = await runningTask();
    await transitionTask(otherServer.db, task.id, { expected_version: task.version, ...hops(7) }, agent);
    // This server still remembers the task at task.version; the agent asks from that version too.
    await expect(
      transitionTask(pgdb.db, task.id, { expected_version: task.version, ...hops(2) }, agent),
    ).rejects.toMatchObject({ code: "version_conflict" });
    const now = await getTaskOrThrow(pgdb.db, task.id);
    expect(now.version).toBe(task.version + 1);
    expect(now.state.budget.hops_used).toBe(7);
  });

  it("answers a stale caller as a read would: version_conflict, not a refusal worked out on the remembered row", async () => {
    const task = await runningTask();
    await transitionTask(otherServer.db, task.id, { expected_version: task.version, ...hops(4) }, agent);
    // On the row this server remembers (RUNNING at task.version) this move is refused by the workflow; the task is
    // no longer at that version, which is what a read would have answered first.
    await expect(
      transitionTask(pgdb.db, task.id, { expected_version: task.version, to: "COMPLETED" }, agent),
    ).rejects.toMatchObject({ code: "version_conflict" });
  });

  it("is not built upon after any write to the row, even one that kept the version number", async () => {
    const task = await runningTask();
    // Nothing in Verity writes a task without a new version; a hand-made repair on the database might.
    await pgdb.db.$executeRaw`
      UPDATE tasks SET state = jsonb_set(state, '{budget,tokens_spent}', '5'::jsonb) WHERE id = ${task.id}`;
    const { result, sent } = await captureStatements(() =>
      transitionTask(pgdb.db, task.id, { expected_version: task.version, ...hops(3) }, agent),
    );
    // The remembered swap lost on the row version (xmin); the row was read and the change built on it.
    expect(sent.filter((s) => s.text.includes("UPDATE tasks"))).toHaveLength(2);
    expect(result.task.state.budget.tokens_spent).toBe(5);
    const now = await getTaskOrThrow(pgdb.db, task.id);
    expect(now.state.budget).toMatchObject({ hops_used: 3, tokens_spent: 5 });
  });
});

describe("the ledger's moves of the task", () => {
  const deps = () => connectorsFor(provider.url);
  async function intentOf(task: { id: string; version: number }, callId: string) {
    const intent = await recordIntent(
      pgdb.db,
      task.id,
      { tool_call_id: callId, tool: "payments.refund", request: refund, expected_version: task.version },
      agent,
    );
    if (intent.kind !== "proceed") throw new Error(`intent: ${intent.kind}`);
    return markSent(pgdb.db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
  }
  async function succeeded(
    sent: Pick<
      Awaited<ReturnType<typeof intentOf>>,
      "id" | "attemptId" | "taskId" | "tool" | "idempotencyKey" | "request"
    >,
  ) {
    const outcome = await performEffect(sent, deps());
    if (outcome.kind !== "succeeded") throw new Error(`refund: ${outcome.kind}`);
    return recordOutcome(
      pgdb.db,
      sent.id,
      { attempt_id: sent.attemptId, outcome: "succeeded", result: outcome.record, evidence: { ...outcome.evidence } },
      agent,
      deps(),
    );
  }
  /** recordIntent with `send`: the intent and its move to SENT in one request. */
  function sentWithItself(task: { id: string; version: number }, callId: string) {
    return recordIntent(
      pgdb.db,
      task.id,
      { tool_call_id: callId, tool: "payments.refund", request: refund, expected_version: task.version, send: true },
      agent,
    );
  }
  const readsTask = (text: string) => /^\s*SELECT id, workflow_name/.test(text);

  it("are made on the row this server wrote: the intent and the outcome read no task row", async () => {
    const task = await runningTask();
    const { result: sent, sent: intentStatements } = await captureStatements(() => intentOf(task, "refund-a"));
    const { result: done, sent: outcomeStatements } = await captureStatements(() => succeeded(sent));
    expect(intentStatements.filter((s) => readsTask(s.text))).toEqual([]);
    expect(outcomeStatements.filter((s) => readsTask(s.text))).toEqual([]);
    expect(done.task).toMatchObject({ status: "RUNNING", version: task.version + 2 });
    expect((await getTaskOrThrow(pgdb.db, task.id)).version).toBe(task.version + 2);
  });

  it("an intent sent with itself is one transaction: one commit, none of markSent's own statements", async () => {
    const task = await runningTask();
    const { result: intent, sent } = await captureStatements(() => sentWithItself(task, "refund-c"));
    if (intent.kind !== "proceed") throw new Error(`intent: ${intent.kind}`);
    expect(intent.execution.status).toBe("SENT");
    const commits = sent.filter((s) => /^\s*COMMIT/i.test(s.text));
    expect(commits).toHaveLength(1);
    // markSent alone would read the execution again before its own transaction: only the intent's lookup of the call reads it.
    const executionReads = sent.filter((s) =>
      /^\s*SELECT tenant_id AS "tenantId", id, task_id AS "taskId", tool_call_id/.test(s.text),
    );
    expect(executionReads).toHaveLength(1);
    const done = await succeeded(intent.execution);
    expect(done.task).toMatchObject({ status: "RUNNING", version: task.version + 2 });
  });

  it("an intent on a remembered row that changed since is made again on a read: recorded once, on the row as it is", async () => {
    const task = await runningTask();
    // A write that kept the version (a hand-made repair): the intent's CAS, sent with its insert and checkpoint, loses on the row version.
    await pgdb.db.$executeRaw`
      UPDATE tasks SET state = jsonb_set(state, '{budget,tokens_spent}', '7'::jsonb) WHERE id = ${task.id}`;
    const { result: intent, sent } = await captureStatements(() => sentWithItself(task, "refund-d"));
    if (intent.kind !== "proceed") throw new Error(`intent: ${intent.kind}`);
    // Two transactions: the first rolled back with everything sent after its CAS, the second made on a read.
    expect(sent.filter((s) => /^\s*ROLLBACK/i.test(s.text))).toHaveLength(1);
    expect(sent.filter((s) => /^\s*COMMIT/i.test(s.text))).toHaveLength(1);
    expect(intent.task?.state.budget.tokens_spent).toBe(7);
    expect(await pgdb.db.execution.count({ where: { taskId: task.id } })).toBe(1);
    const checkpoints = await pgdb.db.checkpoint.findMany({
      where: { taskId: task.id, trigger: "before_irreversible_effect" },
    });
    expect(checkpoints.map((c) => c.stateVersion)).toEqual([task.version + 1]);
    const done = await succeeded(intent.execution);
    expect(done.task).toMatchObject({ status: "RUNNING", version: task.version + 2 });
  });

  it("twin intents of one call at once: one execution, and every answer is that call's or a version conflict", async () => {
    const task = await runningTask();
    const twins = await Promise.allSettled(
      Array.from({ length: 5 }, () =>
        recordIntent(
          pgdb.db,
          task.id,
          { tool_call_id: "refund-e", tool: "payments.refund", request: refund, expected_version: task.version },
          agent,
        ),
      ),
    );
    const executions = await pgdb.db.execution.findMany({ where: { taskId: task.id } });
    expect(executions).toHaveLength(1);
    for (const twin of twins) {
      if (twin.status === "fulfilled")
        expect(twin.value).toMatchObject({ kind: "proceed", execution: { id: executions[0]!.id } });
      else expect(twin.reason).toMatchObject({ code: "version_conflict" });
    }
    expect(twins.filter((t) => t.status === "fulfilled").length).toBeGreaterThanOrEqual(1);
  });

  it("an outcome after another server cancelled the task is recorded, and the task stays cancelled", async () => {
    const task = await runningTask();
    const sent = await intentOf(task, "refund-b");
    // This server remembers the task WAITING_FOR_TOOL at task.version + 1; a person cancels it through another.
    await transitionTask(
      otherServer.db,
      task.id,
      { expected_version: task.version + 1, to: "CANCELLED", reason: "customer called" },
      { identity: "user:alice", kind: "user" },
    );
    const done = await succeeded(sent);
    expect(done.execution.status).toBe("SUCCEEDED");
    expect(done.task).toBeNull();
    const now = await getTaskOrThrow(pgdb.db, task.id);
    expect(now).toMatchObject({ status: "CANCELLED", version: task.version + 2 });
  });
});
