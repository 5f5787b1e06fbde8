import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { performEffect } from "@/lib/connectors/effects";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";
import { agent, connectorsFor, refund } from "@/tests/helpers/effects";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { captureStatements, explainStatements, rowsReadFrom } from "@/tests/helpers/statement-plans";

/**
 * What one more refund costs a task that has made many: every read of the
 * ledger's three steps, replayed under EXPLAIN with the tenant's role, reads
 * a bounded number of rows, except the one list the checkpoint format asks
 * for (`tool_receipt_ids`, every receipt the task holds). A read that
 * filtered the task's whole history (its creation record found among all
 * its transitions, the reservations of a task with no commitment) made
 * every refund slower than the last (docs/benchmarks.md).
 */
let pgdb: PostgresTestDatabase;
let provider: Sandbox;
beforeAll(async () => {
  [pgdb, provider] = await Promise.all([
    createPostgresTestDatabase({ poolSize: 4 }),
    startSandbox({ port: 0, host: "127.0.0.1" }),
  ]);
});
afterAll(async () => {
  await Promise.all([pgdb?.drop(), provider?.close()]);
});

async function taskMakingRefunds(committedUsd: number) {
  const deps = connectorsFor(provider.url);
  const { task } = await createTask(
    pgdb.db,
    { workflow: "agent-task", intent_id: "many-refunds", budget: { currency_committed_usd: committedUsd } },
    agent,
  );
  let version = task.version;
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = (await transitionTask(pgdb.db, task.id, { expected_version: version, to }, agent)).task.version;
  let n = 0;
  const oneRefund = async () => {
    const intent = await recordIntent(
      pgdb.db,
      task.id,
      { tool_call_id: `refund-${++n}`, tool: "payments.refund", request: refund, expected_version: version },
      agent,
    );
    if (intent.kind !== "proceed") throw new Error(`intent: ${intent.kind}`);
    const sent = await markSent(pgdb.db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
    const outcome = await performEffect(sent, deps);
    if (outcome.kind !== "succeeded") throw new Error(`refund: ${outcome.kind}`);
    const done = await recordOutcome(
      pgdb.db,
      sent.id,
      { attempt_id: sent.attemptId, outcome: "succeeded", result: outcome.record, evidence: { ...outcome.evidence } },
      agent,
      deps,
    );
    version = done.task!.version;
  };
  return { oneRefund, taskId: task.id };
}

describe("a refund on a task that has made many", () => {
  it("reads a bounded number of rows, apart from the checkpoint's list of receipts", async () => {
    const made = 40;
    // No commitment declared: reservations are recorded, not limited, so not read.
    const { oneRefund, taskId } = await taskMakingRefunds(0);
    for (let i = 0; i < made; i++) await oneRefund();
    // Other tasks' history, copies of this one's rows (as bench:cost's loader makes them), so the planner chooses
    // as it does on a table of some size: among 40 rows, scanning the tenant's whole index costs it the same as a
    // primary-key probe, and either is chosen.
    await pgdb.db.$executeRaw`
      INSERT INTO tasks (tenant_id, id, workflow_name, workflow_version, workflow_digest, status, version, state, intent_id,
                         created_at, created_by, updated_at, updated_by)
      SELECT tenant_id, id || '_copy_' || g, workflow_name, workflow_version, workflow_digest, status, version, state,
             intent_id, created_at, created_by, updated_at, updated_by
        FROM tasks, generate_series(1, 60) AS g WHERE id = ${taskId}`;
    await pgdb.db.$executeRaw`
      INSERT INTO transitions
      SELECT (jsonb_populate_record(NULL::transitions,
                to_jsonb(t) || jsonb_build_object('id', t.id || '_copy_' || g, 'task_id', t.task_id || '_copy_' || g))).*
        FROM transitions t, generate_series(1, 60) AS g WHERE t.task_id = ${taskId}`;
    await pgdb.db.$executeRaw`
      INSERT INTO executions
      SELECT (jsonb_populate_record(NULL::executions,
                to_jsonb(e) || jsonb_build_object('id', e.id || '_copy_' || g, 'task_id', e.task_id || '_copy_' || g,
                                                  'idempotency_key', e.idempotency_key || '_copy_' || g))).*
        FROM executions e, generate_series(1, 60) AS g WHERE e.task_id = ${taskId}`;
    await pgdb.db.$executeRawUnsafe("ANALYZE tasks; ANALYZE transitions; ANALYZE executions");

    const { sent } = await captureStatements(oneRefund);
    const reads = await explainStatements(pgdb.url, sent);
    expect(reads.length).toBeGreaterThan(3);
    for (const read of reads) {
      const label = read.text.replace(/\s+/g, " ").slice(0, 80);
      // The creation record and the task's moves: a handful of rows, never the 80+ transitions the task made.
      expect(rowsReadFrom(read.plan, "transitions"), label).toBeLessThanOrEqual(2);
      const fromExecutions = rowsReadFrom(read.plan, "executions");
      if (read.text.includes("AS receipts")) expect(fromExecutions, label).toBeLessThanOrEqual(made + 2);
      else expect(fromExecutions, label).toBeLessThanOrEqual(2);
    }
  }, 120_000);

  it("with a commitment, reads the live reservations as one sum per currency", async () => {
    const { oneRefund } = await taskMakingRefunds(10_000);
    for (let i = 0; i < 5; i++) await oneRefund();
    const { sent } = await captureStatements(oneRefund);
    const reservations = sent.filter((s) => s.text.includes("sum(reserved_minor)"));
    expect(reservations).toHaveLength(1);
    const reads = await explainStatements(pgdb.url, reservations);
    // Every succeeded refund's reservation still counts (its money is gone): the sum reads them, one row comes back.
    expect(rowsReadFrom(reads[0]!.plan, "executions")).toBeGreaterThanOrEqual(5);
  }, 120_000);
});
