import { describe, expect, it } from "vitest";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { listExecutionEvents, type ExecutionView, getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { acquireLease, releaseLease, type LeaseView } from "@/lib/stores/leases";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import type { Actor } from "@/lib/model/actor";
import { performEffect, type ConnectorDeps } from "@/lib/connectors/effects";
import { agent, connectorsFor, failure, refund, runningTask, unreachable } from "@/tests/helpers/effects";
import { sandbox } from "@/tests/sandbox/helpers";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * recordOutcome from a worker whose lease was taken over while its call was
 * out: the provider's answer is recorded (it is a fact about the world), the
 * fenced task move is skipped and said so, and the new holder continues from
 * the receipt instead of waiting for the reconciler's SENT timeout.
 */

const workerA = agent;
const workerB: Actor = { identity: "spiffe://verity.local/agent/refund-bot-2", kind: "agent" };

const db = useTestDatabase();

interface TakenOver {
  taskId: string;
  /** The task's version while it waits for the tool. */
  version: number;
  execution: ExecutionView;
  a: LeaseView;
  b: LeaseView;
  /** The provider A called, which the engine asks to confirm a success. */
  deps: ConnectorDeps;
  /** The refund's id at the provider when A's call was made (`made`), else null. */
  refundId: string | null;
}

/**
 * A sends a refund under its lease (`made`: and the provider makes it); its
 * lease ends (released here: no clock involved) and B takes the task over
 * before A reports.
 */
async function takenOverWhileSent(options: { made?: boolean } = {}): Promise<TakenOver> {
  const deps = connectorsFor((await sandbox()).url);
  const task = await runningTask(db);
  const a = await acquireLease(db, task.id, {}, workerA);
  const intent = await recordIntent(
    db,
    task.id,
    {
      tool_call_id: "refund-1",
      tool: "payments.refund",
      request: refund,
      expected_version: task.version,
      fencing_token: a.fencingToken,
    },
    workerA,
  );
  if (intent.kind !== "proceed" || !intent.task) throw new Error("expected a new intent");
  await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, workerA);
  let refundId: string | null = null;
  if (options.made) {
    const made = await performEffect(await getExecutionRowOrThrow(db, intent.execution.id), deps);
    if (made.kind !== "succeeded") throw new Error(`the provider did not make the refund: ${made.message}`);
    refundId = made.record.id;
  }
  await releaseLease(db, task.id, a.fencingToken, workerA);
  const b = await acquireLease(db, task.id, {}, workerB);
  expect(BigInt(b.fencingToken)).toBeGreaterThan(BigInt(a.fencingToken));
  return { taskId: task.id, version: intent.task.version, execution: intent.execution, a, b, deps, refundId };
}

const evidenceFor = (s: TakenOver) => ({
  id: s.refundId,
  idempotency_key: s.execution.idempotencyKey,
  metadata: { execution_id: s.execution.id },
});

async function taskRow(taskId: string) {
  const row = await db.task.findFirstOrThrow({ where: { id: taskId } });
  return { status: row.status, version: row.version, transitions: await db.transition.count({ where: { taskId } }) };
}

describe("an outcome reported under a stale fencing token", () => {
  it("records the success, leaves the task where it is, and says the lease was taken over; a retry of the report says the same", async () => {
    const s = await takenOverWhileSent({ made: true });
    const before = await taskRow(s.taskId);
    expect(before.status).toBe("WAITING_FOR_TOOL");

    const report = {
      attempt_id: s.execution.attemptId,
      outcome: "succeeded",
      result: { refund_id: s.refundId },
      evidence: evidenceFor(s),
      fencing_token: s.a.fencingToken,
    };
    const recorded = await recordOutcome(db, s.execution.id, report, workerA, s.deps);
    expect(recorded.execution).toMatchObject({ status: "SUCCEEDED", result: { refund_id: s.refundId } });
    expect(recorded.task).toBeNull();
    expect(recorded.leaseConflict?.lease).toMatchObject({ holder: workerB.identity, fencingToken: s.b.fencingToken });
    expect(recorded.leaseConflict?.message).toContain(`Fencing token ${s.a.fencingToken} is not the current lease`);
    expect(recorded.leaseConflict?.message).toContain("The outcome is recorded; the task was not moved");
    expect(await taskRow(s.taskId)).toEqual(before);
    expect((await listExecutionEvents(db, s.execution.id)).at(-1)).toMatchObject({
      fromStatus: "SENT",
      toStatus: "SUCCEEDED",
      actor: workerA.identity,
    });

    // The first answer was lost and A's client sends the report again.
    const again = await recordOutcome(db, s.execution.id, report, workerA, s.deps);
    expect(again).toMatchObject({
      execution: { status: "SUCCEEDED", version: recorded.execution.version },
      task: null,
      leaseConflict: { lease: { holder: workerB.identity } },
    });
  });

  it("the new lease holder finds the receipt, makes no call, and moves the task on; the stale worker's next write is refused", async () => {
    const s = await takenOverWhileSent({ made: true });
    await recordOutcome(
      db,
      s.execution.id,
      {
        attempt_id: s.execution.attemptId,
        outcome: "succeeded",
        evidence: evidenceFor(s),
        fencing_token: s.a.fencingToken,
      },
      workerA,
      s.deps,
    );

    const replay = await recordIntent(
      db,
      s.taskId,
      {
        tool_call_id: "refund-1",
        tool: "payments.refund",
        request: refund,
        expected_version: s.version,
        fencing_token: s.b.fencingToken,
      },
      workerB,
    );
    expect(replay).toMatchObject({
      kind: "receipt",
      execution: { id: s.execution.id, status: "SUCCEEDED", attempt: 1 },
    });
    const moved = await transitionTask(
      db,
      s.taskId,
      { expected_version: s.version, to: "RUNNING", fencing_token: s.b.fencingToken, reason: "refund receipt found" },
      workerB,
    );
    expect(moved.task.status).toBe("RUNNING");

    const stale = await failure(
      transitionTask(
        db,
        s.taskId,
        { expected_version: moved.task.version, to: "CANCELLED", fencing_token: s.a.fencingToken },
        workerA,
      ),
    );
    expect(stale.code).toBe("lease_conflict");
    expect(await db.execution.count({ where: { taskId: s.taskId } })).toBe(1);
  });

  it("keeps the evidence rules: a success that names no execution is refused and nothing is written", async () => {
    const s = await takenOverWhileSent();
    const refused = await failure(
      recordOutcome(
        db,
        s.execution.id,
        {
          attempt_id: s.execution.attemptId,
          outcome: "succeeded",
          evidence: { id: "re_other" },
          fencing_token: s.a.fencingToken,
        },
        workerA,
        s.deps,
      ),
    );
    expect(refused).toMatchObject({ code: "invariant_violated", invariants: ["success_requires_matching_evidence"] });
    expect((await getExecutionRowOrThrow(db, s.execution.id)).status).toBe("SENT");
  });

  it("a known failure is recorded for the new holder, who retries under the same key", async () => {
    const s = await takenOverWhileSent();
    const recorded = await recordOutcome(
      db,
      s.execution.id,
      { attempt_id: s.execution.attemptId, outcome: "failed", error: "card_declined", fencing_token: s.a.fencingToken },
      workerA,
      s.deps,
    );
    expect(recorded).toMatchObject({
      execution: { status: "FAILED" },
      task: null,
      leaseConflict: { lease: { holder: workerB.identity } },
    });
    expect((await taskRow(s.taskId)).status).toBe("WAITING_FOR_TOOL");

    const running = await transitionTask(
      db,
      s.taskId,
      { expected_version: s.version, to: "RUNNING", fencing_token: s.b.fencingToken },
      workerB,
    );
    const retry = await recordIntent(
      db,
      s.taskId,
      {
        tool_call_id: "refund-1",
        tool: "payments.refund",
        request: refund,
        expected_version: running.task.version,
        fencing_token: s.b.fencingToken,
      },
      workerB,
    );
    expect(retry).toMatchObject({
      kind: "proceed",
      execution: { id: s.execution.id, attempt: 2, idempotencyKey: s.execution.idempotencyKey },
    });
  });

  it("an unknown outcome is recorded at once, and the reconciler moves the waiting task", async () => {
    const s = await takenOverWhileSent();
    const recorded = await recordOutcome(
      db,
      s.execution.id,
      { attempt_id: s.execution.attemptId, outcome: "unknown", error: "timeout", fencing_token: s.a.fencingToken },
      workerA,
      s.deps,
    );
    expect(recorded).toMatchObject({ execution: { status: "OUTCOME_UNKNOWN" }, task: null });
    expect(recorded.leaseConflict).not.toBeNull();
    // Due now, not after VERITY_SENT_TIMEOUT_MS: the outcome is known to be unknown.
    const reconciled = await reconcileExecution(db, s.execution.id, unreachable);
    expect(reconciled).toMatchObject({ action: "needs_human", task: { status: "WAITING_FOR_HUMAN" } });
  });

  it("an agent reporting without a token under another's live lease is treated the same; with the current token the task moves", async () => {
    const s = await takenOverWhileSent({ made: true });
    const tokenless = await recordOutcome(
      db,
      s.execution.id,
      { attempt_id: s.execution.attemptId, outcome: "succeeded", evidence: evidenceFor(s) },
      workerA,
      s.deps,
    );
    expect(tokenless).toMatchObject({ execution: { status: "SUCCEEDED" }, task: null });
    expect(tokenless.leaseConflict?.message).toContain(`Task ${s.taskId} is leased by another worker`);

    const fresh = await takenOverWhileSent({ made: true });
    const current = await recordOutcome(
      db,
      fresh.execution.id,
      {
        attempt_id: fresh.execution.attemptId,
        outcome: "succeeded",
        evidence: evidenceFor(fresh),
        fencing_token: fresh.b.fencingToken,
      },
      workerB,
      fresh.deps,
    );
    expect(current).toMatchObject({ leaseConflict: null, task: { status: "RUNNING", version: fresh.version + 1 } });
  });
});
