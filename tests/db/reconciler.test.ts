import { describe, expect, it } from "vitest";
import { openedAlert } from "@/lib/use-cases/alerts/divergence";
import { startBackgroundLoop } from "@/lib/jobs/background";
import { performEffect } from "@/lib/connectors/effects";
import { resolveDivergence } from "@/lib/use-cases/alerts/divergence";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { listExecutionEvents, getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import {
  reconcileDue,
  reconcileExecution,
  reconcilerActor,
  verifySettled,
} from "@/lib/use-cases/reconciliation/reconciler";
import { listReviews } from "@/lib/use-cases/reviews/list-reviews";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Execution } from "@/lib/generated/prisma/client";
import {
  afterTimeout,
  agent,
  alice,
  connectorsFor,
  executionRow,
  failure,
  lostAnswer,
  refund,
  refundExecution,
  refundsUnderKey,
  successMadeAt,
  taskStatusOf,
  unreachable,
  reviewRow,
} from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { post, sandbox, waitFor } from "@/tests/sandbox/helpers";

const db = useTestDatabase();
const row = (id: string) => executionRow(db, id);
const taskStatus = (id: string) => taskStatusOf(db, id);

/** The worker's call, through a connector with the given faults. */
async function callWith(baseUrl: string, execution: Execution, faults: string[], timeoutMs = 10_000) {
  return performEffect(execution, connectorsFor(baseUrl, { faults, timeoutMs }));
}

describe("reconcileExecution", () => {
  it("timeout after the provider committed: the lookup finds it → RECONCILED_SUCCEEDED with the record as evidence, task VALIDATING", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    await lostAnswer(s.url, execution);
    const unknown = await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    expect(unknown.task?.status).toBe("RECONCILING");

    const result = await reconcileExecution(db, execution.id, connectorsFor(s.url));
    expect(result).toMatchObject({ action: "reconciled_succeeded", from: "OUTCOME_UNKNOWN", lookup: "found" });
    const settled = await row(execution.id);
    expect(settled.status).toBe("RECONCILED_SUCCEEDED");
    expect(settled.settledAt).not.toBeNull();
    const evidence = settled.evidence as {
      source: string;
      idempotency_key: string;
      record: { id: string; amount_cents: number };
    };
    expect(evidence).toMatchObject({
      source: "lookup",
      idempotency_key: execution.idempotencyKey,
      record: { amount_cents: refund.amount_cents },
    });
    expect(evidence.record.id).toMatch(/^re_/);
    expect(await taskStatus(execution.taskId)).toBe("VALIDATING");

    const last = (await listExecutionEvents(db, execution.id)).at(-1);
    expect(last).toMatchObject({
      fromStatus: "OUTCOME_UNKNOWN",
      toStatus: "RECONCILED_SUCCEEDED",
      actor: reconcilerActor.identity,
    });
    expect(last?.evidence).toMatchObject({ record: { id: evidence.record.id } });
    const outbox = await db.outboxMessage.findMany({
      where: { taskId: execution.taskId, topic: "execution.reconciled" },
    });
    expect(outbox.map((m) => m.payload)).toEqual([
      { execution_id: execution.id, tool: "payments.refund", from: "OUTCOME_UNKNOWN", to: "RECONCILED_SUCCEEDED" },
    ]);
  });

  it("error before commit and a dead worker: not found → RECONCILED_FAILED; the retry under the same key makes exactly one refund", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    expect(await callWith(s.url, execution, ["error_before_commit"])).toMatchObject({
      kind: "failed",
      reason: "not_processed",
    });
    // The worker dies here, before reporting: the execution stays SENT.
    expect((await reconcileExecution(db, execution.id, connectorsFor(s.url))).action).toBe("not_due");

    const result = await reconcileExecution(db, execution.id, connectorsFor(s.url), { now: afterTimeout() });
    expect(result).toMatchObject({ action: "reconciled_failed", from: "SENT", lookup: "not_found" });
    expect((await row(execution.id)).status).toBe("RECONCILED_FAILED");
    const task = await db.task.findFirstOrThrow({ where: { id: execution.taskId } });
    expect(task.status).toBe("RUNNING");
    // RECONCILING on the way: the reconciler is a system actor, and WAITING_FOR_TOOL → RUNNING is the agent's edge.
    expect((await listTransitions(db, task.id)).slice(-2).map((tr) => [tr.toStatus, tr.actor])).toEqual([
      ["RECONCILING", reconcilerActor.identity],
      ["RUNNING", reconcilerActor.identity],
    ]);

    const retry = await recordIntent(
      db,
      task.id,
      { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: task.version },
      agent,
    );
    expect(retry.kind).toBe("proceed");
    expect(retry.execution).toMatchObject({ attempt: 2, idempotencyKey: execution.idempotencyKey });
    await markSent(db, execution.id, { attempt_id: retry.execution.attemptId }, agent);
    const second = await performEffect(await row(execution.id), connectorsFor(s.url));
    expect(second.kind).toBe("succeeded");
    if (second.kind !== "succeeded") return;
    const done = await recordOutcome(
      db,
      execution.id,
      { attempt_id: retry.execution.attemptId, outcome: "succeeded", result: second.record, evidence: second.record },
      agent,
      connectorsFor(s.url),
    );
    expect(done.execution.status).toBe("SUCCEEDED");
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(1);
  });

  it("a lookup that cannot say (a request with the key still in flight) → NEEDS_HUMAN, a review, the task waits for people", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    // The worker's request is held at the provider; its key is claimed, nothing committed yet.
    const worker = new AbortController();
    const slow = performEffect(execution, connectorsFor(s.url, { faults: ["latency=30000"] }), {
      signal: worker.signal,
      timeoutMs: 60_000,
    });
    await waitFor(
      async () =>
        (
          await fetch(`${s.url}/v1/refunds?idempotency_key=${encodeURIComponent(execution.idempotencyKey)}`).then((r) =>
            r.json(),
          )
        ).in_flight,
    );

    const result = await reconcileExecution(db, execution.id, connectorsFor(s.url), { now: afterTimeout() });
    expect(result).toMatchObject({ action: "needs_human", from: "SENT", lookup: "unknown" });
    expect((await row(execution.id)).status).toBe("NEEDS_HUMAN");
    expect(await taskStatus(execution.taskId)).toBe("WAITING_FOR_HUMAN");
    const [review] = (await listReviews(db, { status: "OPEN" })).filter((r) => r.executionId === execution.id);
    expect(review).toMatchObject({
      id: result.reviewId,
      requiredApprovals: 1,
      amountCents: 2500,
      currency: "usd",
      customerId: "cus_1",
      approvals: 0,
    });
    expect(review?.reason).toContain("in_flight");

    // The worker gives up; whatever it reports later cannot settle what people now hold.
    worker.abort();
    expect((await slow).kind).toBe("unknown");
    expect(
      (
        await failure(
          recordOutcome(
            db,
            execution.id,
            {
              attempt_id: execution.attemptId,
              outcome: "succeeded",
              evidence: { idempotency_key: execution.idempotencyKey },
            },
            agent,
          ),
        )
      ).invariants,
    ).toEqual(["execution_status_machine"]);
  });

  it("an INTENT_RECORDED older than the timeout was never sent → FAILED 'never sent', task RUNNING, the old attempt cannot send", async () => {
    const execution = await refundExecution(db, { sent: false });
    expect((await reconcileExecution(db, execution.id, unreachable)).action).toBe("not_due");
    const result = await reconcileExecution(db, execution.id, unreachable, { now: afterTimeout() });
    expect(result.action).toBe("never_sent");
    expect(await row(execution.id)).toMatchObject({ status: "FAILED", error: "never sent" });
    expect(await taskStatus(execution.taskId)).toBe("RUNNING");
    expect((await failure(markSent(db, execution.id, { attempt_id: execution.attemptId }, agent))).invariants).toEqual([
      "execution_status_machine",
    ]);
  });

  it("a record under our key that refunds another amount → effect_mismatch alert with both sides, NEEDS_HUMAN, and no re-execution while it is open", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    const foreign = await post(
      `${s.url}/v1/refunds`,
      { ...refund, amount_cents: 9900 },
      { "Idempotency-Key": execution.idempotencyKey },
    );
    expect(foreign.status).toBe(200);

    const result = await reconcileExecution(db, execution.id, connectorsFor(s.url), { now: afterTimeout() });
    expect(result.action).toBe("effect_mismatch");
    const alert = await openedAlert(db, await db.divergenceAlert.findUniqueOrThrow({ where: { id: result.alertId } }));
    expect(alert).toMatchObject({
      kind: "effect_mismatch",
      status: "OPEN",
      executionId: execution.id,
      severity: "critical",
    });
    expect(alert.internal).toMatchObject({ request: { amount_cents: 2500 } });
    expect(alert.external).toMatchObject({
      record: { id: foreign.json.id, amount_cents: 9900 },
      mismatches: ["amount_cents"],
    });
    expect((await row(execution.id)).status).toBe("NEEDS_HUMAN");
    expect(await taskStatus(execution.taskId)).toBe("WAITING_FOR_HUMAN");

    const review = await reviewRow(db, { executionId: execution.id });
    const refused = await failure(
      decideReview(
        db,
        review.id,
        { expected_version: review.version, decision: "approve_execute", reason: "send it" },
        alice,
        connectorsFor(s.url),
      ),
    );
    expect(refused.invariants).toEqual(["no_irreversible_effect_while_diverged"]);
    const accepted = await failure(
      decideReview(
        db,
        review.id,
        { expected_version: review.version, decision: "approve_accept_evidence", reason: "looks done" },
        alice,
        connectorsFor(s.url),
      ),
    );
    expect(accepted.invariants).toEqual(["accept_evidence_must_match_request"]);
  });

  it("a decision's process dies during the provider call: the committed SENT is reconciled never applied, and back to the review at the attempt limit", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    await reconcileExecution(db, execution.id, unreachable);
    const review = await reviewRow(db, { executionId: execution.id });
    // The process dies at the call: SENT (attempt 2) is committed, nothing reaches the provider.
    const dying = {
      ...connectorsFor(s.url),
      payments: {
        provider: "sandbox",
        refund: () => Promise.reject(new Error("killed")),
        lookupRefund: () => Promise.reject(new Error("killed")),
      },
    };
    await expect(
      decideReview(db, review.id, { expected_version: 1, decision: "approve_execute", reason: "go" }, alice, dying),
    ).rejects.toThrow("killed");
    expect(await row(execution.id)).toMatchObject({ status: "SENT", attempt: 2 });
    expect(await taskStatus(execution.taskId)).toBe("WAITING_FOR_HUMAN");

    const result = await reconcileExecution(db, execution.id, connectorsFor(s.url), { now: afterTimeout() });
    expect(result).toMatchObject({
      action: "reconciled_failed",
      from: "SENT",
      reviewId: review.id,
      execution: { status: "NEEDS_HUMAN" },
    });
    // Attempt 2 was the refund's last (tools.ts maxAttempts): never applied, so the approval is closed and people decide again.
    expect((await listExecutionEvents(db, execution.id)).slice(-2).map((e) => [e.fromStatus, e.toStatus])).toEqual([
      ["SENT", "RECONCILED_FAILED"],
      ["RECONCILED_FAILED", "NEEDS_HUMAN"],
    ]);
    expect(await taskStatus(execution.taskId)).toBe("WAITING_FOR_HUMAN");
    expect(await reviewRow(db, { id: review.id })).toMatchObject({ status: "OPEN", round: 2 });
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(0);
  });

  it("a refund confirmed after an operator cancelled the task is recorded, and raised as effect_after_task_ended", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    await lostAnswer(s.url, execution);
    const unknown = await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    await transitionTask(
      db,
      execution.taskId,
      { expected_version: unknown.task!.version, to: "CANCELLED", reason: "customer withdrew" },
      alice,
    );

    const result = await reconcileExecution(db, execution.id, connectorsFor(s.url));
    expect(result).toMatchObject({ action: "reconciled_succeeded", task: null });
    expect(await taskStatus(execution.taskId)).toBe("CANCELLED");
    const alert = await openedAlert(
      db,
      await db.divergenceAlert.findFirstOrThrow({ where: { executionId: execution.id } }),
    );
    expect(alert).toMatchObject({
      kind: "effect_after_task_ended",
      internal: { task_status: "CANCELLED", execution_status: "RECONCILED_SUCCEEDED" },
    });
  });

  it("settled executions are not due", async () => {
    const execution = await refundExecution(db);
    await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "failed", error: "declined" },
      agent,
    );
    expect((await reconcileExecution(db, execution.id, unreachable, { now: afterTimeout() })).action).toBe("not_due");
  });
});

describe("reconcileDue", () => {
  const own = useTestDatabase();

  it("two reconcilers at once: each execution is corrected exactly once, the loser changes nothing", async () => {
    const s = await sandbox();
    const executions: Execution[] = [];
    for (let i = 0; i < 3; i++) {
      const execution = await refundExecution(own);
      await callWith(s.url, execution, ["drop_response"]);
      await recordOutcome(
        own,
        execution.id,
        { attempt_id: execution.attemptId, outcome: "unknown", error: "connection lost" },
        agent,
      );
      executions.push(execution);
    }
    // Not yet due: SENT for a moment only (a live worker).
    const live = await refundExecution(own);

    const deps = connectorsFor(s.url);
    const [a, b] = await Promise.all([reconcileDue(own, deps), reconcileDue(own, deps)]);
    expect(a.counts.reconciled_succeeded + b.counts.reconciled_succeeded).toBe(3);
    expect(a.errors.concat(b.errors)).toEqual([]);
    expect(a.examined + b.examined - 3).toBe(a.conflicts + b.conflicts + a.counts.not_due + b.counts.not_due);
    for (const e of executions) {
      const events = await listExecutionEvents(own, e.id);
      expect(events.filter((ev) => ev.toStatus === "RECONCILED_SUCCEEDED")).toHaveLength(1);
      expect((await listTransitions(own, e.taskId)).filter((tr) => tr.toStatus === "VALIDATING")).toHaveLength(1);
    }
    expect((await getExecutionRowOrThrow(own, live.id)).status).toBe("SENT");
    // Later the live worker's SENT is stale and its effect was never made: due, and not found.
    const stale = await reconcileDue(own, deps, { now: afterTimeout() });
    expect(stale.results.map((r) => [r.executionId, r.action])).toEqual([[live.id, "reconciled_failed"]]);
  });

  it("the background loop reconciles and delivers the outbox, one tick at a time, and stops", async () => {
    const s = await sandbox();
    const execution = await refundExecution(own);
    await callWith(s.url, execution, ["error_after_commit"]);
    await recordOutcome(
      own,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "500" },
      agent,
    );
    const delivered: string[] = [];
    const lines: string[] = [];
    const loop = startBackgroundLoop(own, connectorsFor(s.url), 60_000, {
      deliver: async (m) => void delivered.push(m.topic),
      log: (l) => lines.push(l),
    });
    const [first, second] = await Promise.all([loop.runOnce(), loop.runOnce()]);
    expect(first).toBe(second);
    expect(first).toMatchObject({ reconciled: 1, errors: 0 });
    expect((await getExecutionRowOrThrow(own, execution.id)).status).toBe("RECONCILED_SUCCEEDED");
    expect(delivered).toContain("execution.reconciled");
    expect(lines.some((l) => l.includes("1 reconciled_succeeded"))).toBe(true);
    await loop.stop();
  });
});

describe("verifySettled", () => {
  const own = useTestDatabase();

  it("raises each kind of divergence once, with both sides' evidence, and never re-raises what a person resolved", async () => {
    const s = await sandbox();
    const deps = connectorsFor(s.url);

    // Recorded succeeded, but the provider has nothing: it confirmed the refund when it was
    // reported and has lost its record since (a second sandbox stands for it before the loss).
    const missing = await refundExecution(own);
    const beforeTheLoss = connectorsFor((await sandbox()).url);
    const missingReport = await successMadeAt(beforeTheLoss, missing);
    await recordOutcome(own, missing.id, missingReport, agent, beforeTheLoss);

    // Recorded failed, but the provider has the refund.
    const found = await refundExecution(own);
    expect((await performEffect(found, deps)).kind).toBe("succeeded");
    await recordOutcome(
      own,
      found.id,
      { attempt_id: found.attemptId, outcome: "failed", error: "reported as declined" },
      agent,
    );

    // Consistent: succeeded at both.
    const fine = await refundExecution(own);
    const ok = await performEffect(fine, deps);
    if (ok.kind !== "succeeded") throw new Error("expected success");
    await recordOutcome(
      own,
      fine.id,
      { attempt_id: fine.attemptId, outcome: "succeeded", evidence: ok.record },
      agent,
      deps,
    );

    // Completed, then written around the rules: a mandatory subtask reopened.
    const { task } = await createTask(
      own,
      {
        workflow: "agent-task",
        intent_id: "i",
        subtasks: [{ id: "refund", title: "Refund", mandatory: true, status: "COMPLETED" }],
      },
      agent,
    );
    let version = task.version;
    for (const to of ["PLANNING", "READY", "RUNNING", "WAITING_FOR_TOOL", "VALIDATING", "COMPLETED"])
      version = (await transitionTask(own, task.id, { expected_version: version, to }, agent)).task.version;
    await own.$executeRaw`UPDATE tasks SET state = jsonb_set(state, '{subtasks,0,status}', '"ACTIVE"') WHERE id = ${task.id}`;

    const summary = await verifySettled(own, deps);
    expect(summary).toMatchObject({ checked: 3, unknown: 0, tasksChecked: 1 });
    expect(summary.raised.map((r) => [r.kind, r.executionId ?? r.taskId]).sort()).toEqual(
      [
        ["completed_with_open_mandatory_subtask", task.id],
        ["effect_missing_at_provider", missing.id],
      ].sort(),
    );
    // Recorded failed, and the provider has the refund we asked for: the provider's word wins (success-after-failure.ts).
    expect(summary.corrected.map((c) => c.executionId)).toEqual([found.id]);
    expect(await getExecutionRowOrThrow(own, found.id)).toMatchObject({
      status: "RECONCILED_SUCCEEDED",
      evidence: {
        source: "lookup",
        earlier: { status: "FAILED", error: "reported as declined" },
        record: { idempotency_key: found.idempotencyKey },
      },
    });
    const alerts = await Promise.all((await own.divergenceAlert.findMany()).map((a) => openedAlert(own, a)));
    const byKind = Object.fromEntries(alerts.map((a) => [a.kind, a]));
    expect(byKind.effect_missing_at_provider?.internal).toMatchObject({
      execution_status: "SUCCEEDED",
      evidence: { id: missingReport.result.id },
    });
    expect(byKind.effect_missing_at_provider?.external).toMatchObject({
      lookup: "not_found",
      provider: { provider: "sandbox", httpStatus: 200 },
    });
    expect(byKind.completed_with_open_mandatory_subtask?.external).toEqual({
      open_mandatory_subtasks: [{ id: "refund", mandatory: true, status: "ACTIVE" }],
    });
    expect(await own.outboxMessage.count({ where: { topic: "divergence.raised" } })).toBe(2);

    expect(await verifySettled(own, deps)).toMatchObject({ raised: [], corrected: [] });
    const alert = byKind.effect_missing_at_provider!;
    await resolveDivergence(
      own,
      alert.id,
      { expectedVersion: alert.version, resolution: "refund confirmed with the customer" },
      alice,
    );
    expect((await verifySettled(own, deps)).raised).toEqual([]);
    expect(await own.divergenceAlert.count()).toBe(2);
  });

  it("a provider that cannot be asked concludes nothing", async () => {
    const summary = await verifySettled(own, unreachable);
    expect(summary.unknown).toBe(summary.checked);
    expect(summary.raised).toEqual([]);
  });
});
