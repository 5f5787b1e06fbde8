import { describe, expect, it } from "vitest";
import { openedAlert } from "@/lib/use-cases/alerts/divergence";
import { reconcileAlert } from "@/lib/use-cases/alerts/alert-actions";
import { performEffect, type ConnectorDeps } from "@/lib/connectors/effects";
import { raiseDivergence } from "@/lib/use-cases/alerts/divergence";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { listExecutionEvents } from "@/lib/stores/execution-store";
import { evidenceProblem } from "@/lib/model/monitor/success-evidence";
import { reconcilerActor, verifySettled } from "@/lib/use-cases/reconciliation/reconciler";
import { listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import type { Execution } from "@/lib/generated/prisma/client";
import {
  agent,
  alice,
  connectorsFor,
  executionRow,
  failure,
  refund,
  refundExecution,
  refundsUnderKey,
  unreachable,
} from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { post, sandbox } from "@/tests/sandbox/helpers";

/**
 * The provider's word wins over a recorded failure. Measured on main: a 503
 * recorded as FAILED, then a later call under the same idempotency key
 * succeeded at the provider; reporting that success got 422 "FAILED →
 * SUCCEEDED is not allowed", and the task ended FAILED with the refund made
 * and an effect_found_after_failure alert open. Here every way the
 * provider's record of the effect turns up — the worker's report, the
 * reconciler's lookup, the alert's reconcile action — settles the execution
 * RECONCILED_SUCCEEDED with both records, moves the task on, and resolves
 * the alert, all of it in the history.
 */

const db = useTestDatabase();
const row = (id: string) => executionRow(db, id);
const taskOf = (id: string) => db.task.findFirstOrThrow({ where: { id } });

interface RefusedThenApplied {
  execution: Execution;
  deps: ConnectorDeps;
  sandboxUrl: string;
  /** The provider's answer to the later call under the same key: the refund. */
  applied: Record<string, unknown>;
}

/**
 * Issue 9's reproduction: the provider refuses the refund with a 503 (nothing
 * stored), which the worker records as FAILED; a later call under the same
 * key succeeds at the provider.
 */
async function refusedThenApplied(): Promise<RefusedThenApplied> {
  const s = await sandbox();
  const deps = connectorsFor(s.url);
  const execution = await refundExecution(db);
  const refused = await performEffect(execution, connectorsFor(s.url, { faults: ["error_before_commit"] }));
  expect(refused).toMatchObject({ kind: "failed", reason: "not_processed", httpStatus: 503 });
  await recordOutcome(
    db,
    execution.id,
    {
      attempt_id: execution.attemptId,
      outcome: "failed",
      error: "not_processed: 503",
      result: { reason: "not_processed", retryable: true },
    },
    agent,
    deps,
  );
  const later = await performEffect(execution, deps);
  if (later.kind !== "succeeded") throw new Error(`expected the later call to succeed, got ${later.kind}`);
  expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(1);
  return {
    execution: await row(execution.id),
    deps,
    sandboxUrl: s.url,
    applied: { ...later.evidence, record: later.record },
  };
}

/** The agent gave up on the failure (the task FAILED), and the verifier raised the contradiction, as the measured run did. */
async function failedAndAlerted(execution: Execution) {
  const task = await taskOf(execution.taskId);
  await transitionTask(
    db,
    execution.taskId,
    { expected_version: task.version, to: "FAILED", reason: "refund failed: not_processed" },
    agent,
  );
  return db.$transaction((tx) =>
    raiseDivergence(
      tx,
      {
        taskId: execution.taskId,
        executionId: execution.id,
        kind: "effect_found_after_failure",
        message: "recorded FAILED, the provider has the refund",
        internal: { execution_status: "FAILED" },
        external: {},
      },
      reconcilerActor,
    ),
  );
}

const successReport = (r: RefusedThenApplied) => ({
  attempt_id: r.execution.attemptId,
  outcome: "succeeded",
  result: r.applied.record as Record<string, unknown>,
  evidence: r.applied,
});

describe("a success reported after the attempt was recorded FAILED", () => {
  it("is not a 422: RECONCILED_SUCCEEDED with both records, the FAILED task moved on to VALIDATING, the alert resolved by the system, one refund", async () => {
    const r = await refusedThenApplied();
    const alert = await failedAndAlerted(r.execution);

    const reported = await recordOutcome(db, r.execution.id, successReport(r), agent, r.deps);
    expect(reported).toMatchObject({
      execution: { status: "RECONCILED_SUCCEEDED", error: null },
      task: { status: "VALIDATING" },
      leaseConflict: null,
    });

    // The history: the failure, then the correction carrying both records.
    const events = await listExecutionEvents(db, r.execution.id);
    expect(events.map((e) => [e.fromStatus, e.toStatus])).toEqual([
      [null, "INTENT_RECORDED"],
      ["INTENT_RECORDED", "SENT"],
      ["SENT", "FAILED"],
      ["FAILED", "RECONCILED_SUCCEEDED"],
    ]);
    expect(events.at(-1)).toMatchObject({
      actor: agent.identity,
      evidence: {
        correction: "success_after_failure",
        earlier: { status: "FAILED", error: "not_processed: 503", result: { retryable: true } },
        record: { idempotency_key: r.execution.idempotencyKey, amount_cents: refund.amount_cents },
        reported: { evidence: { idempotencyKey: r.execution.idempotencyKey } },
      },
    });
    expect(events.at(-1)?.reason).toContain("outweighs the recorded FAILED");
    // Evidence the invariant monitor accepts: it names this execution and its key, and nothing else.
    const settled = await row(r.execution.id);
    expect(evidenceProblem(settled.evidence, settled)).toBeNull();

    // The task, through the workflow's own recovery edges, each a CAS transition.
    expect((await listTransitions(db, r.execution.taskId)).slice(-4).map((t) => t.toStatus)).toEqual([
      "FAILED",
      "RECOVERING",
      "RECONCILING",
      "VALIDATING",
    ]);

    // The alert: resolved through the alert CAS, as the system, audited.
    const resolved = await openedAlert(db, await db.divergenceAlert.findUniqueOrThrow({ where: { id: alert.id } }));
    expect(resolved).toMatchObject({
      status: "RESOLVED",
      version: alert.version + 1,
      resolvedBy: "spiffe://verity.local/system/execution-ledger",
    });
    expect(resolved.resolution).toContain("RECONCILED_SUCCEEDED");
    const audit = await db.auditEntry.findMany({ where: { subjectId: alert.id }, orderBy: { seq: "asc" } });
    expect(audit.map((a) => a.action)).toEqual(["divergence.raised", "divergence.resolved"]);

    expect(await refundsUnderKey(r.sandboxUrl, r.execution.idempotencyKey)).toBe(1);
    // A receipt now: the same call never goes out again.
    expect(await db.outboxMessage.count({ where: { taskId: r.execution.taskId, topic: "execution.reconciled" } })).toBe(
      1,
    );
  });

  it("a task its agent escalated to people moves on too: WAITING_FOR_HUMAN → HUMAN_RESOLVED → VALIDATING", async () => {
    const r = await refusedThenApplied();
    const task = await taskOf(r.execution.taskId);
    await transitionTask(
      db,
      task.id,
      { expected_version: task.version, to: "WAITING_FOR_HUMAN", reason: "refund not made" },
      agent,
    );
    const reported = await recordOutcome(db, r.execution.id, successReport(r), agent, r.deps);
    expect(reported.task).toMatchObject({ status: "VALIDATING" });
    expect((await listTransitions(db, task.id)).slice(-2).map((t) => [t.toStatus, t.actor])).toEqual([
      ["HUMAN_RESOLVED", "spiffe://verity.local/system/execution-ledger"],
      ["VALIDATING", "spiffe://verity.local/system/execution-ledger"],
    ]);
  });

  it("a task an operator cancelled stays cancelled, and the effect goes to people as effect_after_task_ended", async () => {
    const r = await refusedThenApplied();
    const task = await taskOf(r.execution.taskId);
    await transitionTask(
      db,
      task.id,
      { expected_version: task.version, to: "CANCELLED", reason: "customer withdrew" },
      alice,
    );
    const reported = await recordOutcome(db, r.execution.id, successReport(r), agent, r.deps);
    expect(reported).toMatchObject({ execution: { status: "RECONCILED_SUCCEEDED" }, task: null });
    expect((await taskOf(task.id)).status).toBe("CANCELLED");
    expect(
      await openedAlert(db, await db.divergenceAlert.findFirstOrThrow({ where: { executionId: r.execution.id } })),
    ).toMatchObject({
      kind: "effect_after_task_ended",
      status: "OPEN",
    });
  });

  it("the provider cannot be asked: the report's own evidence settles it, and says the provider was not asked", async () => {
    const r = await refusedThenApplied();
    const reported = await recordOutcome(db, r.execution.id, successReport(r), agent, unreachable);
    expect(reported.execution).toMatchObject({
      status: "RECONCILED_SUCCEEDED",
      evidence: { source: "report", record: null, provider: { lookup: "unknown", reason: "unreachable" } },
    });
    // The failure had sent the task back to RUNNING, where a success leaves it too: its agent reads the receipt and goes on.
    expect(reported).toMatchObject({ task: null, correction: { kind: "stays" } });
    expect((await taskOf(r.execution.taskId)).status).toBe("RUNNING");
  });

  it("the provider has nothing under the key: the report is not believed, the failure stands, nothing is written", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "failed", error: "declined", result: { retryable: false } },
      agent,
    );
    const before = await row(execution.id);
    const claimed = {
      attempt_id: execution.attemptId,
      outcome: "succeeded",
      evidence: { idempotency_key: execution.idempotencyKey, id: "re_imagined" },
    };
    const refused = await failure(recordOutcome(db, execution.id, claimed, agent, connectorsFor(s.url)));
    expect(refused).toMatchObject({ code: "invariant_violated", invariants: ["success_confirmed_by_provider"] });
    expect(await row(execution.id)).toEqual(before);
  });

  it("a record under the key that is not the request corrects nothing: effect_mismatch for people", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "failed", error: "declined", result: { retryable: false } },
      agent,
    );
    await post(
      `${s.url}/v1/refunds`,
      { ...refund, amount_cents: 9900, metadata: { execution_id: execution.id, task_id: execution.taskId } },
      { "Idempotency-Key": execution.idempotencyKey },
    );
    const claimed = {
      attempt_id: execution.attemptId,
      outcome: "succeeded",
      evidence: { idempotency_key: execution.idempotencyKey },
    };
    expect((await failure(recordOutcome(db, execution.id, claimed, agent, connectorsFor(s.url)))).invariants).toEqual([
      "success_matches_provider_record",
    ]);
    expect((await row(execution.id)).status).toBe("FAILED");
    expect(
      await openedAlert(db, await db.divergenceAlert.findFirstOrThrow({ where: { executionId: execution.id } })),
    ).toMatchObject({
      kind: "effect_mismatch",
      status: "OPEN",
    });
  });

  it("still needs evidence naming the execution", async () => {
    const r = await refusedThenApplied();
    const refused = await failure(
      recordOutcome(
        db,
        r.execution.id,
        { attempt_id: r.execution.attemptId, outcome: "succeeded", evidence: { id: "re_other" } },
        agent,
        r.deps,
      ),
    );
    expect(refused.invariants).toEqual(["success_requires_matching_evidence"]);
    expect((await row(r.execution.id)).status).toBe("FAILED");
  });
});

describe("the reconciler's own discovery of the effect of a recorded failure", () => {
  it("verifySettled corrects it the same way: RECONCILED_SUCCEEDED, the FAILED task on to VALIDATING, the open alert resolved", async () => {
    const r = await refusedThenApplied();
    const alert = await failedAndAlerted(r.execution);
    const summary = await verifySettled(db, r.deps);
    expect(summary.corrected).toEqual([
      { executionId: r.execution.id, taskId: r.execution.taskId, task: expect.stringContaining("VALIDATING") },
    ]);
    expect(summary.raised.filter((a) => a.executionId === r.execution.id)).toEqual([]);
    expect(await row(r.execution.id)).toMatchObject({
      status: "RECONCILED_SUCCEEDED",
      evidence: { source: "lookup", earlier: { status: "FAILED" } },
    });
    expect((await taskOf(r.execution.taskId)).status).toBe("VALIDATING");
    expect(
      await openedAlert(db, await db.divergenceAlert.findUniqueOrThrow({ where: { id: alert.id } })),
    ).toMatchObject({
      status: "RESOLVED",
      resolvedBy: reconcilerActor.identity,
    });
  });

  it("the alert's reconcile action settles it and closes the alert on the person's finding", async () => {
    const r = await refusedThenApplied();
    const alert = await failedAndAlerted(r.execution);
    const result = await reconcileAlert(db, alert.id, { expectedVersion: alert.version }, alice, r.deps);
    expect(result).toMatchObject({
      reconciled: { action: "reconciled_succeeded", from: "FAILED" },
      finding: { agreed: true },
      alert: { status: "RESOLVED", resolvedBy: alice.identity },
    });
    expect(await row(r.execution.id)).toMatchObject({ status: "RECONCILED_SUCCEEDED" });
    expect((await listExecutionEvents(db, r.execution.id)).at(-1)).toMatchObject({
      fromStatus: "FAILED",
      toStatus: "RECONCILED_SUCCEEDED",
      actor: alice.identity,
    });
    expect((await taskOf(r.execution.taskId)).status).toBe("VALIDATING");
  });
});
