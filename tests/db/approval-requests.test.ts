import { describe, expect, it } from "vitest";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { getReviewOrThrow } from "@/lib/use-cases/reviews/get-review";
import {
  agent,
  alice,
  connectorsFor,
  failure,
  refund,
  refundsUnderKey,
  runningTask,
  taskStatusOf,
} from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { sandbox } from "@/tests/sandbox/helpers";

/**
 * An agent's framework asks a person to approve a call before it is sent
 * (AI SDK tool approval, OpenAI Agents needsApproval, a LangGraph
 * interrupt): the intent is recorded frozen into the review queue, and the
 * person's decision is what lets it go, exactly once, or cancels it.
 */
const db = useTestDatabase();

const askFirst = (taskId: string, version: number) =>
  recordIntent(
    db,
    taskId,
    {
      tool_call_id: "refund",
      tool: "payments.refund",
      request: refund,
      expected_version: version,
      approval: { reason: "refund of a disputed order" },
    },
    agent,
  );

describe("an agent's approval request", () => {
  it("freezes the call into the review queue with the agent's reason; nothing is sent", async () => {
    const task = await runningTask(db);
    const blocked = await askFirst(task.id, task.version);
    expect(blocked.kind).toBe("blocked");
    if (blocked.kind !== "blocked") return;
    expect(blocked.execution.status).toBe("NEEDS_HUMAN");
    expect(blocked.message).toContain('the agent asked for a person\'s approval first ("refund of a disputed order")');
    expect(blocked.guard?.kind).toBe("approval_requested");
    expect(await taskStatusOf(db, task.id)).toBe("WAITING_FOR_HUMAN");
    const review = await getReviewOrThrow(db, blocked.reviewId);
    expect(review.status).toBe("OPEN");
    // Asking again is the same answer, the same review: no second call, no second review.
    const again = await askFirst(task.id, task.version);
    expect(again).toMatchObject({ kind: "blocked", reviewId: blocked.reviewId });
  });

  it("is sent once a person approves, under the call's one key; the agent's retry gets the receipt", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    const blocked = await askFirst(task.id, task.version);
    if (blocked.kind !== "blocked") throw new Error("expected a frozen call");
    const review = await getReviewOrThrow(db, blocked.reviewId);
    const decided = await decideReview(
      db,
      review.id,
      { expected_version: review.version, decision: "approve_execute", reason: "checked the order: refund it" },
      alice,
      connectorsFor(s.url),
    );
    expect(decided).toMatchObject({ executed: true, outcome: "succeeded" });
    expect(await refundsUnderKey(s.url, blocked.execution.idempotencyKey)).toBe(1);
    const retry = await askFirst(task.id, 1);
    expect(retry.kind).toBe("receipt");
    expect(await refundsUnderKey(s.url, blocked.execution.idempotencyKey)).toBe(1);
  });

  it("is cancelled for good when a person rejects it", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    const blocked = await askFirst(task.id, task.version);
    if (blocked.kind !== "blocked") throw new Error("expected a frozen call");
    await decideReview(
      db,
      blocked.reviewId,
      { expected_version: 1, decision: "reject", reason: "the order was never paid" },
      alice,
      connectorsFor(s.url),
    );
    const retry = await failure(askFirst(task.id, 1));
    expect(retry.invariants).toEqual(["cancelled_execution_final"]);
    expect(await refundsUnderKey(s.url, blocked.execution.idempotencyKey)).toBe(0);
  });

  it("needs a reason in words", async () => {
    const task = await runningTask(db);
    const refused = await failure(
      recordIntent(
        db,
        task.id,
        {
          tool_call_id: "refund",
          tool: "payments.refund",
          request: refund,
          expected_version: task.version,
          approval: { reason: "  " },
        },
        agent,
      ),
    );
    expect(refused.code).toBe("validation_failed");
    expect(refused.details.errors?.map((e) => e.field)).toEqual(["approval.reason"]);
  });
});
