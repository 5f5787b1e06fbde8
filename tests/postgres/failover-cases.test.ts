import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { intentIdOf, orderOf, taskIdOf } from "@/programs/agent/order";
import { refundSubtasksOf } from "@/programs/agent/plan";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import type { Db } from "@/lib/db/client";
import { importCheckpoint } from "@/lib/use-cases/checkpoints/import-checkpoint";
import { exportCheckpoint } from "@/lib/use-cases/checkpoints/export-checkpoint";
import { listCheckpoints } from "@/lib/use-cases/checkpoints/list-checkpoints";
import { performEffect, type ConnectorDeps } from "@/lib/connectors/effects";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { getExecutionRowOrThrow, listExecutions } from "@/lib/stores/execution-store";
import { recordCallsLostWithPrimary, takeOverTask, type PlannedCall } from "@/lib/use-cases/failover/failover";
import { acquireLease } from "@/lib/stores/leases";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { plannedCallsOf } from "./failover-agent";

/**
 * Each answer the takeover can get, set up on purpose (failover.test.ts
 * meets them as the timing of a loss deals them): two databases holding the
 * same task up to a point, as a backup would, the primary moving on, its
 * checkpoint shipped, and the provider in the state the case needs.
 */
const agent: Actor = { identity: "spiffe://verity.test/agent/failover-cases", kind: "agent" };
const engineer: Actor = { identity: "spiffe://verity.test/user/failover-engineer", kind: "user" };

let primary: PostgresTestDatabase;
let standby: PostgresTestDatabase;
let sandbox: Sandbox;
let deps: ConnectorDeps;
beforeAll(async () => {
  [primary, standby] = await Promise.all([createPostgresTestDatabase(), createPostgresTestDatabase()]);
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1" });
  deps = {
    payments: new SandboxPaymentConnector({ baseUrl: sandbox.url, timeoutMs: 3_000 }),
    crm: new SandboxCrmConnector({ baseUrl: sandbox.url, timeoutMs: 3_000 }),
  };
}, 120_000);
afterAll(async () => {
  await sandbox?.close();
  await Promise.all([primary?.drop(), standby?.drop()]);
});

let cases = 0;

/** The same refund task on both databases at RUNNING (version 4): what the backup holds. */
async function twinTask(): Promise<{ taskId: string; calls: PlannedCall[] }> {
  const order = orderOf(`case-${process.pid}-${++cases}`, 2_500, "usd");
  const taskId = taskIdOf(order);
  for (const db of [primary.db, standby.db]) {
    await createTask(
      db,
      { workflow: "agent-task", task_id: taskId, intent_id: intentIdOf(order), subtasks: refundSubtasksOf(order) },
      agent,
    );
    let version = 1;
    for (const to of ["PLANNING", "READY", "RUNNING"])
      version = (await transitionTask(db, taskId, { expected_version: version, to }, agent)).task.version;
  }
  return { taskId, calls: plannedCallsOf(order) };
}

function intentOf(call: PlannedCall, expected_version: number) {
  return { tool_call_id: call.tool_call_id, tool: call.tool, request: call.request, expected_version };
}

/** The primary records the refund's intent (a checkpoint comes with it) and ships that checkpoint; the standby takes the task over. */
async function primaryIntentShipped(taskId: string, calls: PlannedCall[]) {
  const intent = await recordIntent(primary.db, taskId, intentOf(calls[0]!, 4), agent);
  const [checkpoint] = (await listCheckpoints(primary.db, taskId)).filter(
    (c) => c.trigger === "before_irreversible_effect",
  );
  await importCheckpoint(standby.db, await exportCheckpoint(primary.db, checkpoint!.id));
  return { execution: intent.execution, takeover: () => takeOverTask(standby.db, taskId, engineer, deps) };
}

async function recordLostCalls(db: Db, taskId: string, calls: PlannedCall[], connectors = deps) {
  const lease = await acquireLease(db, taskId, { ttl_seconds: 30 }, agent);
  const lost = await recordCallsLostWithPrimary(
    db,
    taskId,
    calls,
    connectors,
    agent,
    { fencing_token: lease.fencingToken },
    { inFlightWaitMs: 5_000 },
  );
  return { ...lost, lease };
}

async function refundsUnder(key: string) {
  const res = await fetch(`${sandbox.url}/v1/refunds`);
  return (
    (await res.json()) as { data: Array<{ id: string; idempotency_key: string; metadata: Record<string, string> }> }
  ).data.filter((r) => r.idempotency_key === key);
}

describe("the standby's takeover, case by case", () => {
  it("rolled forward into WAITING_FOR_TOOL, the intent never reached the provider: back to RUNNING, the worker makes the call", async () => {
    const { taskId, calls } = await twinTask();
    const { takeover } = await primaryIntentShipped(taskId, calls);
    const report = await takeover();
    expect(report.rollForward).toMatchObject({
      kind: "rolled_forward",
      task: { status: "WAITING_FOR_TOOL", version: 5 },
    });
    expect(await listExecutions(standby.db, taskId)).toEqual([]);

    const lost = await recordLostCalls(standby.db, taskId, calls);
    expect(lost.calls.map((c) => c.kind)).toEqual(["not_made", "not_reached"]);
    expect(lost).toMatchObject({ releasedLostIntent: true, task: { status: "RUNNING" } });
    // The worker holding the lease makes the call (without its token it could be another process of the agent: refused).
    const again = await recordIntent(
      standby.db,
      taskId,
      { ...intentOf(calls[0]!, lost.task.version), fencing_token: lost.lease.fencingToken },
      agent,
    );
    expect(again).toMatchObject({
      kind: "proceed",
      execution: { idempotencyKey: `vrt:${taskId}:refund`, status: "INTENT_RECORDED" },
    });
  });

  it("rolled forward into WAITING_FOR_TOOL, the primary's refund landed: recorded as this call's effect, not made again", async () => {
    const { taskId, calls } = await twinTask();
    const { execution, takeover } = await primaryIntentShipped(taskId, calls);
    await markSent(primary.db, execution.id, { attempt_id: execution.attemptId }, agent);
    const made = await performEffect(await getExecutionRowOrThrow(primary.db, execution.id), deps);
    expect(made.kind).toBe("succeeded");
    await takeover();

    const lost = await recordLostCalls(standby.db, taskId, calls);
    expect(lost.calls[0]).toMatchObject({ kind: "recorded_lost_effect", lostExecutionId: execution.id });
    expect(lost.task.status).toBe("RUNNING");
    const [recorded] = await listExecutions(standby.db, taskId);
    expect(recorded).toMatchObject({
      status: "SUCCEEDED",
      evidence: {
        source: "failover_lookup",
        lost_execution_id: execution.id,
        idempotency_key: execution.idempotencyKey,
      },
    });
    // Sent again under the standby's execution, the key is refused, not applied twice.
    expect(await performEffect(await getExecutionRowOrThrow(standby.db, recorded!.id), deps)).toMatchObject({
      kind: "unknown",
      reason: "idempotency_key_reused",
    });
    expect(await refundsUnder(execution.idempotencyKey)).toHaveLength(1);
  });

  it("the primary's request still in flight at the provider: waited for, then recorded as this call's effect", async () => {
    const { taskId, calls } = await twinTask();
    const { execution, takeover } = await primaryIntentShipped(taskId, calls);
    await markSent(primary.db, execution.id, { attempt_id: execution.attemptId }, agent);
    const slow = new SandboxPaymentConnector({ baseUrl: sandbox.url, faults: ["latency=1500"], timeoutMs: 5_000 });
    const landing = performEffect(await getExecutionRowOrThrow(primary.db, execution.id), { ...deps, payments: slow });
    while ((await deps.payments.lookupRefund(execution.idempotencyKey)).kind === "not_found")
      await new Promise((r) => setTimeout(r, 20));
    await takeover();

    const lost = await recordLostCalls(standby.db, taskId, calls);
    expect(lost.calls[0]).toMatchObject({ kind: "recorded_lost_effect", lostExecutionId: execution.id });
    expect((await landing).kind).toBe("succeeded");
    expect(await refundsUnder(execution.idempotencyKey)).toHaveLength(1);
  });

  it("the backup's intent was sent by the primary after the backup: settled from the provider's record at takeover, never failed as unsent", async () => {
    const { taskId, calls } = await twinTask();
    // The row both databases hold; the primary then sent it and its SENT and outcome were lost with it.
    const intent = await recordIntent(standby.db, taskId, intentOf(calls[0]!, 4), agent);
    expect((await performEffect(await getExecutionRowOrThrow(standby.db, intent.execution.id), deps)).kind).toBe(
      "succeeded",
    );

    const report = await takeOverTask(standby.db, taskId, engineer, deps);
    expect(report).toMatchObject({
      rollForward: { kind: "up_to_date" },
      settled: [{ from: "INTENT_RECORDED", action: "reconciled_succeeded" }],
    });
    expect(await getTaskOrThrow(standby.db, taskId)).toMatchObject({ status: "VALIDATING" });
    expect(await listExecutions(standby.db, taskId)).toMatchObject([{ status: "RECONCILED_SUCCEEDED" }]);
  });

  it("something else under the task's key: recorded OUTCOME_UNKNOWN, and the reconciler hands it to people", async () => {
    const { taskId, calls } = await twinTask();
    const key = `vrt:${taskId}:refund`;
    const other = await deps.payments.refund({
      idempotencyKey: key,
      amountCents: 99,
      currency: "usd",
      chargeId: "ch_other",
      customerId: "cus_other",
      metadata: { executionId: "exec_elsewhere", taskId },
    });
    expect(other.kind).toBe("succeeded");

    const lost = await recordLostCalls(standby.db, taskId, calls);
    expect(lost.calls[0]).toMatchObject({ kind: "recorded_unknown" });
    expect(lost.calls[0]!.kind === "recorded_unknown" && lost.calls[0]!.detail).toContain("amount_cents");
    expect(lost.task.status).toBe("RECONCILING");
    const [execution] = await listExecutions(standby.db, taskId);
    expect(await reconcileExecution(standby.db, execution!.id, deps)).toMatchObject({
      action: "effect_mismatch",
      task: { status: "WAITING_FOR_HUMAN" },
    });
    expect(await refundsUnder(key)).toHaveLength(1);
  });

  it("the provider does not answer: recorded OUTCOME_UNKNOWN, nothing sent", async () => {
    const { taskId, calls } = await twinTask();
    const unreachable = {
      payments: new SandboxPaymentConnector({ baseUrl: "http://127.0.0.1:9", timeoutMs: 500 }),
      crm: new SandboxCrmConnector({ baseUrl: "http://127.0.0.1:9", timeoutMs: 500 }),
    };
    const lost = await recordLostCalls(standby.db, taskId, calls, unreachable);
    expect(lost.calls.map((c) => c.kind)).toEqual(["recorded_unknown", "not_reached"]);
    expect(await listExecutions(standby.db, taskId)).toMatchObject([{ status: "OUTCOME_UNKNOWN" }]);
    expect(await refundsUnder(`vrt:${taskId}:refund`)).toEqual([]);
  });

  it("a call on record is left to the normal protocol, and the calls after an unsettled one are not looked at", async () => {
    const { taskId, calls } = await twinTask();
    await recordIntent(standby.db, taskId, intentOf(calls[0]!, 4), agent);
    const lost = await recordLostCalls(standby.db, taskId, calls);
    expect(lost.calls.map((c) => c.kind)).toEqual(["on_record", "not_reached"]);
    expect(lost).toMatchObject({ releasedLostIntent: false, task: { status: "WAITING_FOR_TOOL" } });
  });
});
