import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { raiseDivergence } from "@/lib/use-cases/alerts/divergence";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { getExecutionRowOrThrow, type ExecutionView } from "@/lib/stores/execution-store";
import { openReview } from "@/lib/stores/review-store";
import { reconcilerActor } from "@/lib/use-cases/reconciliation/reconciler";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { isAppError } from "@/lib/core/errors";
import { openTestPglite } from "@/tests/helpers/pglite";
import { connectorsFor, successMadeAt } from "@/tests/helpers/effects";
import { sandbox } from "@/tests/sandbox/helpers";

const agent: Actor = { identity: "spiffe://verity.local/agent/refund-bot", kind: "agent" };
const refund = { amount_cents: 2500, currency: "usd", charge_id: "ch_1", customer_id: "cus_1" };

let db: Db;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ db, close } = await openTestPglite());
});
afterAll(async () => close());

/** A v2 agent task in RUNNING, ready to call a tool. */
async function runningTask(): Promise<{ id: string; version: number }> {
  const { task } = await createTask(db, { workflow: "agent-task", intent_id: "refund" }, agent);
  let version = task.version;
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
  return { id: task.id, version };
}

async function failure(promise: Promise<unknown>): Promise<{ code: string; invariants: string[] }> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error))
      return { code: error.code, invariants: (error.details.violations ?? []).map((v) => v.invariant) };
    throw error;
  }
  throw new Error("expected a failure");
}

async function intent(taskId: string, version: number, toolCallId = "refund-1"): Promise<ExecutionView> {
  const result = await recordIntent(
    db,
    taskId,
    { tool_call_id: toolCallId, tool: "payments.refund", request: refund, expected_version: version },
    agent,
  );
  expect(result.kind).toBe("proceed");
  return result.execution;
}

describe("execution ledger", () => {
  it("commits the intent with the task's move to WAITING_FOR_TOOL, and a key before anything leaves", async () => {
    const task = await runningTask();
    const execution = await intent(task.id, task.version);
    expect(execution).toMatchObject({
      status: "INTENT_RECORDED",
      irreversible: true,
      attempt: 1,
      idempotencyKey: `vrt:${task.id}:refund-1`,
    });
    const row = await db.task.findFirstOrThrow({ where: { id: task.id } });
    expect([row.status, row.version]).toEqual(["WAITING_FOR_TOOL", task.version + 1]);
  });

  it("a stale task version records no intent at all", async () => {
    const task = await runningTask();
    expect(
      (
        await failure(
          recordIntent(
            db,
            task.id,
            { tool_call_id: "r", tool: "payments.refund", request: refund, expected_version: task.version - 1 },
            agent,
          ),
        )
      ).code,
    ).toBe("version_conflict");
    expect(await db.execution.count({ where: { taskId: task.id } })).toBe(0);
  });

  it("success needs evidence naming the execution; then a replayed step returns the receipt without a call", async () => {
    const task = await runningTask();
    const execution = await intent(task.id, task.version);
    await markSent(db, execution.id, { attempt_id: execution.attemptId }, agent);
    const noEvidence = await failure(
      recordOutcome(
        db,
        execution.id,
        { attempt_id: execution.attemptId, outcome: "succeeded", evidence: { provider: "sandbox", id: "re_1" } },
        agent,
      ),
    );
    expect(noEvidence.invariants).toEqual(["success_requires_matching_evidence"]);
    const s = await sandbox();
    const deps = connectorsFor(s.url);
    const report = await successMadeAt(deps, await getExecutionRowOrThrow(db, execution.id));
    const done = await recordOutcome(db, execution.id, report, agent, deps);
    expect(done.execution.status).toBe("SUCCEEDED");
    expect(done.task?.status).toBe("RUNNING");
    const replay = await recordIntent(
      db,
      task.id,
      { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: done.task!.version },
      agent,
    );
    expect(replay.kind).toBe("receipt");
    expect(replay.execution.result).toEqual(report.result);
  });

  it("an unknown outcome sends the task to RECONCILING and refuses an irreversible retry until reconciled", async () => {
    const task = await runningTask();
    const execution = await intent(task.id, task.version);
    await markSent(db, execution.id, { attempt_id: execution.attemptId }, agent);
    const unknown = await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout after 5000 ms" },
      agent,
    );
    expect(unknown.execution.status).toBe("OUTCOME_UNKNOWN");
    expect(unknown.task?.status).toBe("RECONCILING");
    const retry = await failure(
      recordIntent(
        db,
        task.id,
        { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: unknown.task!.version },
        agent,
      ),
    );
    expect(retry.invariants).toEqual(["unknown_outcome_reconciled_before_retry"]);
    // Never turned into success or failure by a report either.
    expect(
      (await failure(recordOutcome(db, execution.id, { attempt_id: execution.attemptId, outcome: "failed" }, agent)))
        .invariants,
    ).toEqual(["execution_status_machine"]);
  });

  it("a known failure allows a new attempt with the same idempotency key", async () => {
    const task = await runningTask();
    const first = await intent(task.id, task.version);
    await markSent(db, first.id, { attempt_id: first.attemptId }, agent);
    const failed = await recordOutcome(
      db,
      first.id,
      { attempt_id: first.attemptId, outcome: "failed", error: "503 not_processed" },
      agent,
    );
    const second = await intent(task.id, failed.task!.version);
    expect(second.id).toBe(first.id);
    expect(second.attempt).toBe(2);
    expect(second.idempotencyKey).toBe(first.idempotencyKey);
    // The old attempt can no longer report.
    expect((await failure(markSent(db, first.id, { attempt_id: first.attemptId }, agent))).code).toBe(
      "version_conflict",
    );
  });

  it("the same tool call id with a different request is refused", async () => {
    const task = await runningTask();
    await intent(task.id, task.version);
    const other = await failure(
      recordIntent(
        db,
        task.id,
        {
          tool_call_id: "refund-1",
          tool: "payments.refund",
          request: { ...refund, amount_cents: 9999 },
          expected_version: task.version + 1,
        },
        agent,
      ),
    );
    expect(other.code).toBe("idempotency_conflict");
  });

  it("nothing irreversible starts on a task with an open divergence alert", async () => {
    const task = await runningTask();
    await db.$transaction((tx) =>
      raiseDivergence(
        tx,
        { taskId: task.id, kind: "effect_found_after_failure", message: "test", internal: {}, external: {} },
        reconcilerActor,
      ),
    );
    const refused = await failure(
      recordIntent(
        db,
        task.id,
        { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: task.version },
        agent,
      ),
    );
    expect(refused.invariants).toEqual(["no_irreversible_effect_while_diverged"]);
    // A reversible tool still may.
    const note = await recordIntent(
      db,
      task.id,
      {
        tool_call_id: "note-1",
        tool: "crm.add_note",
        request: { customer_id: "cus_1", text: "hi" },
        expected_version: task.version,
      },
      agent,
    );
    expect(note.kind).toBe("proceed");
  });

  it("bad requests name the field under request.", async () => {
    const task = await runningTask();
    try {
      await recordIntent(
        db,
        task.id,
        {
          tool_call_id: "r",
          tool: "payments.refund",
          request: { ...refund, amount_cents: -1, extra: 1 },
          expected_version: task.version,
        },
        agent,
      );
      expect.unreachable();
    } catch (error) {
      expect(isAppError(error) && error.details.errors?.map((e) => e.field).sort()).toEqual([
        "request.amount_cents",
        "request.extra",
      ]);
    }
    expect(await db.execution.count({ where: { taskId: task.id } })).toBe(0);
  });

  it("a task waiting on a frozen action is moved only by the review's decision, not by hand", async () => {
    const task = await runningTask();
    const execution = await intent(task.id, task.version);
    await markSent(db, execution.id, { attempt_id: execution.attemptId }, agent);
    const unknown = await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "dropped" },
      agent,
    );
    const waiting = await transitionTask(
      db,
      task.id,
      { expected_version: unknown.task!.version, to: "WAITING_FOR_HUMAN" },
      agent,
    );
    const row = await getExecutionRowOrThrow(db, execution.id);
    await db.$transaction((tx) => openReview(tx, row, "lookup unknown", reconcilerActor));
    const operator: Actor = { identity: "spiffe://verity.local/user/operator", kind: "user" };
    for (const to of ["HUMAN_RESOLVED", "CANCELLED"]) {
      const refused = await failure(
        transitionTask(db, task.id, { expected_version: waiting.task.version, to, reason: "by hand" }, operator),
      );
      expect(refused.invariants).toEqual(["review_decides_frozen_action"]);
    }
    expect((await db.task.findFirstOrThrow({ where: { id: task.id } })).version).toBe(waiting.task.version);
  });
});
