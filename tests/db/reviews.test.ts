import { describe, expect, it } from "vitest";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { listExecutionEvents } from "@/lib/stores/execution-store";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { getReview } from "@/lib/use-cases/reviews/get-review";
import { listReviews } from "@/lib/use-cases/reviews/list-reviews";
import { decideReview, reviewExecutorActor } from "@/lib/use-cases/reviews/decide-review";
import { listTransitions } from "@/lib/use-cases/tasks/task-queries";
import type { Execution, Review } from "@/lib/generated/prisma/client";
import {
  agent,
  alice,
  bob,
  carol,
  connectorsFor,
  executionRow,
  failure,
  lostAnswer,
  refund,
  refundExecution,
  refundsUnderKey,
  taskStatusOf,
  unreachable,
  reviewRow,
} from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { sandbox } from "@/tests/sandbox/helpers";

const db = useTestDatabase();
const row = (id: string) => executionRow(db, id);
const taskStatus = (id: string) => taskStatusOf(db, id);

/**
 * A refund frozen for review: its outcome was unknown and the provider could
 * not be asked. `committed`: the provider did apply it (the answer was lost).
 */
async function frozenRefund(
  baseUrl: string,
  options: { amount?: number; committed?: boolean } = {},
): Promise<{ execution: Execution; review: Review }> {
  const execution = await refundExecution(db, {
    request: { ...refund, amount_cents: options.amount ?? refund.amount_cents },
  });
  if (options.committed) await lostAnswer(baseUrl, execution);
  await recordOutcome(
    db,
    execution.id,
    { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
    agent,
  );
  expect((await reconcileExecution(db, execution.id, unreachable)).action).toBe("needs_human");
  return {
    execution: await row(execution.id),
    review: await reviewRow(db, { executionId: execution.id }),
  };
}

describe("approve_execute", () => {
  it("re-executes under the same key: the provider applied it once before, and still has exactly one refund", async () => {
    const s = await sandbox();
    const { execution, review } = await frozenRefund(s.url, { committed: true });
    expect(review).toMatchObject({ status: "OPEN", version: 1, requiredApprovals: 1 });

    const decided = await decideReview(
      db,
      review.id,
      { expected_version: 1, decision: "approve_execute", reason: "customer confirmed no refund arrived" },
      alice,
      connectorsFor(s.url),
    );
    expect(decided).toMatchObject({ executed: true, outcome: "succeeded" });
    expect(decided.review).toMatchObject({
      status: "APPROVED",
      approvals: 1,
      decisions: [{ kind: "approve_execute", actor: alice.identity }],
    });
    expect(decided.execution).toMatchObject({
      status: "SUCCEEDED",
      attempt: 2,
      idempotencyKey: execution.idempotencyKey,
    });
    expect(decided.task?.status).toBe("VALIDATING");
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(1);

    const events = (await listExecutionEvents(db, execution.id)).slice(-2);
    expect(events.map((e) => [e.fromStatus, e.toStatus, e.actor])).toEqual([
      ["NEEDS_HUMAN", "SENT", alice.identity],
      ["SENT", "SUCCEEDED", reviewExecutorActor.identity],
    ]);
    expect(
      (await listTransitions(db, execution.taskId)).slice(-2).map((tr) => [tr.fromStatus, tr.toStatus, tr.actor]),
    ).toEqual([
      ["WAITING_FOR_HUMAN", "HUMAN_RESOLVED", alice.identity],
      ["HUMAN_RESOLVED", "VALIDATING", alice.identity],
    ]);
    expect(
      (await db.outboxMessage.findMany({ where: { taskId: execution.taskId, topic: "review.decided" } })).length,
    ).toBeGreaterThan(0);
  });

  it("four eyes: the first approval records and keeps the review open, the same person cannot approve twice, a second person executes", async () => {
    const s = await sandbox();
    const { execution, review } = await frozenRefund(s.url, { amount: 60_000 });
    expect(review.requiredApprovals).toBe(2);
    const deps = connectorsFor(s.url);

    const first = await decideReview(
      db,
      review.id,
      { expected_version: 1, decision: "approve_execute", reason: "verified with the bank" },
      alice,
      deps,
    );
    expect(first).toMatchObject({
      executed: false,
      review: { status: "OPEN", version: 2, approvals: 1 },
      execution: { status: "NEEDS_HUMAN", attempt: 1 },
    });
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(0);
    expect((await listExecutionEvents(db, execution.id)).at(-1)?.reason).toContain("approval 1 of 2");

    const twice = await failure(
      decideReview(db, review.id, { expected_version: 2, decision: "approve_execute", reason: "again" }, alice, deps),
    );
    expect(twice).toMatchObject({ code: "invariant_violated", invariants: ["one_decision_per_person"] });

    const second = await decideReview(
      db,
      review.id,
      { expected_version: 2, decision: "approve_execute", reason: "second pair of eyes" },
      bob,
      deps,
    );
    expect(second).toMatchObject({
      executed: true,
      outcome: "succeeded",
      review: { status: "APPROVED", approvals: 2 },
      execution: { status: "SUCCEEDED" },
    });
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(1);
    expect(await taskStatus(execution.taskId)).toBe("VALIDATING");
  });

  it("two operators deciding at once: one wins, the other gets version_conflict with the review as it is now; one refund", async () => {
    const s = await sandbox();
    const { execution, review } = await frozenRefund(s.url);
    const deps = connectorsFor(s.url);
    const results = await Promise.allSettled([
      decideReview(db, review.id, { expected_version: 1, decision: "approve_execute", reason: "go" }, alice, deps),
      decideReview(db, review.id, { expected_version: 1, decision: "approve_execute", reason: "go too" }, bob, deps),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected");
    const conflict = await failure(Promise.reject(lost?.reason));
    expect(conflict.code).toBe("version_conflict");
    expect(conflict.details.review).toMatchObject({ id: review.id });
    expect((conflict.details.review as { version: number }).version).toBeGreaterThan(1);
    expect(await db.reviewDecision.count({ where: { reviewId: review.id } })).toBe(1);
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(1);
  });

  it("an unknown outcome again sends it back to people: NEEDS_HUMAN, the review open with the new facts; then the evidence is accepted", async () => {
    const s = await sandbox();
    const { execution, review } = await frozenRefund(s.url);
    const decided = await decideReview(
      db,
      review.id,
      { expected_version: 1, decision: "approve_execute", reason: "retry" },
      alice,
      connectorsFor(s.url, { faults: ["error_after_commit"] }),
    );
    expect(decided).toMatchObject({
      executed: true,
      outcome: "unknown",
      execution: { status: "NEEDS_HUMAN", attempt: 2 },
      review: { status: "OPEN", version: 3, round: 2, approvals: 0 },
    });
    expect(decided.review.reason).toContain("server_error");
    expect(decided.review.decisions).toMatchObject([{ round: 1, kind: "approve_execute", actor: alice.identity }]);
    expect((await listExecutionEvents(db, execution.id)).slice(-3).map((e) => e.toStatus)).toEqual([
      "SENT",
      "OUTCOME_UNKNOWN",
      "NEEDS_HUMAN",
    ]);
    expect(await taskStatus(execution.taskId)).toBe("WAITING_FOR_HUMAN");

    // A new round: the person who approved the attempt that came back unknown may decide again.
    const accepted = await decideReview(
      db,
      review.id,
      { expected_version: 3, decision: "approve_accept_evidence", reason: "the provider shows it" },
      alice,
      connectorsFor(s.url),
    );
    expect(accepted).toMatchObject({
      review: { status: "APPROVED", round: 2 },
      execution: { status: "RECONCILED_SUCCEEDED" },
      task: { status: "VALIDATING" },
    });
    expect(accepted.review.decisions.map((d) => [d.round, d.actor, d.kind])).toEqual([
      [1, alice.identity, "approve_execute"],
      [2, alice.identity, "approve_accept_evidence"],
    ]);
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(1);
  });

  it("four eyes per round: after an unknown re-execution the next round needs two approvals again, from anyone, once each", async () => {
    const s = await sandbox();
    const { execution, review } = await frozenRefund(s.url, { amount: 60_000 });
    await decideReview(
      db,
      review.id,
      { expected_version: 1, decision: "approve_execute", reason: "verified" },
      alice,
      connectorsFor(s.url),
    );
    // The provider commits and answers 500: the outcome of round 1's re-execution is unknown.
    const unknown = await decideReview(
      db,
      review.id,
      { expected_version: 2, decision: "approve_execute", reason: "second pair" },
      bob,
      connectorsFor(s.url, { faults: ["error_after_commit"] }),
    );
    expect(unknown).toMatchObject({
      executed: true,
      outcome: "unknown",
      review: { status: "OPEN", round: 2, approvals: 0 },
    });
    const reopened = await db.outboxMessage.findMany({
      where: { taskId: execution.taskId, topic: "review.opened" },
      orderBy: { createdAt: "asc" },
    });
    expect(reopened.map((m) => (m.payload as { round: number }).round)).toEqual([1, 2]);

    const deps = connectorsFor(s.url);
    const first = await decideReview(
      db,
      review.id,
      { expected_version: unknown.review.version, decision: "approve_execute", reason: "still owed" },
      alice,
      deps,
    );
    expect(first).toMatchObject({ executed: false, review: { status: "OPEN", round: 2, approvals: 1 } });
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(1);
    const twice = await failure(
      decideReview(
        db,
        review.id,
        { expected_version: first.review.version, decision: "approve_execute", reason: "again" },
        alice,
        deps,
      ),
    );
    expect(twice.invariants).toEqual(["one_decision_per_person"]);

    const second = await decideReview(
      db,
      review.id,
      { expected_version: first.review.version, decision: "approve_execute", reason: "confirmed" },
      bob,
      deps,
    );
    expect(second).toMatchObject({
      executed: true,
      outcome: "succeeded",
      review: { status: "APPROVED", round: 2, approvals: 2 },
      execution: { status: "SUCCEEDED", attempt: 3 },
    });
    expect(second.review.decisions.map((d) => [d.round, d.actor])).toEqual([
      [1, alice.identity],
      [1, bob.identity],
      [2, alice.identity],
      [2, bob.identity],
    ]);
    // Same key every attempt: the provider applied it once.
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(1);
  });
});

describe("other decisions", () => {
  it("reject cancels the execution and the task, with the reason on record", async () => {
    const s = await sandbox();
    const { execution, review } = await frozenRefund(s.url);
    const decided = await decideReview(
      db,
      review.id,
      { expected_version: 1, decision: "reject", reason: "duplicate request from the customer" },
      alice,
      connectorsFor(s.url),
    );
    expect(decided).toMatchObject({
      executed: false,
      review: { status: "REJECTED" },
      execution: { status: "CANCELLED" },
      task: { status: "CANCELLED" },
    });
    expect(decided.review.decidedAt).not.toBeNull();
    expect((await row(execution.id)).error).toContain("duplicate request from the customer");
    // The words stay with the decision (sealed at rest); the task's transition, not sealed, names the review.
    expect(decided.review.decisions.at(-1)?.reason).toBe("duplicate request from the customer");
    expect((await listTransitions(db, execution.taskId)).at(-1)?.reason).toContain(`review ${review.id} rejected`);
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(0);
    const again = await failure(
      decideReview(
        db,
        review.id,
        { expected_version: 2, decision: "approve_execute", reason: "changed my mind" },
        bob,
        connectorsFor(s.url),
      ),
    );
    expect(again.invariants).toEqual(["review_undecided"]);
  });

  it("accepting the evidence needs the provider to show the effect now; without it nothing is written", async () => {
    const s = await sandbox();
    const { execution, review } = await frozenRefund(s.url);
    const refused = await failure(
      decideReview(
        db,
        review.id,
        { expected_version: 1, decision: "approve_accept_evidence", reason: "surely done" },
        alice,
        connectorsFor(s.url),
      ),
    );
    expect(refused).toMatchObject({
      code: "invariant_violated",
      invariants: ["accept_evidence_requires_provider_record"],
      details: { lookup: { kind: "not_found" } },
    });
    expect(await reviewRow(db, { id: review.id })).toMatchObject({
      version: 1,
      status: "OPEN",
    });
    expect(await db.reviewDecision.count({ where: { reviewId: review.id } })).toBe(0);
    expect((await row(execution.id)).status).toBe("NEEDS_HUMAN");

    const committed = await frozenRefund(s.url, { committed: true });
    const accepted = await decideReview(
      db,
      committed.review.id,
      { expected_version: 1, decision: "approve_accept_evidence", reason: "refund visible at the provider" },
      alice,
      connectorsFor(s.url),
    );
    expect(accepted).toMatchObject({
      executed: false,
      review: { status: "APPROVED" },
      execution: { status: "RECONCILED_SUCCEEDED" },
      task: { status: "VALIDATING" },
    });
    expect(accepted.execution.evidence).toMatchObject({
      source: "lookup",
      accepted_by: alice.identity,
      record: { amount_cents: 2500 },
    });
    expect((await listTransitions(db, committed.execution.taskId)).slice(-2).map((tr) => tr.toStatus)).toEqual([
      "HUMAN_RESOLVED",
      "VALIDATING",
    ]);
  });

  it("escalate keeps it in the queue, flagged; someone else decides later", async () => {
    const s = await sandbox();
    const { review } = await frozenRefund(s.url);
    const escalated = await decideReview(
      db,
      review.id,
      { expected_version: 1, decision: "escalate", reason: "amount disputed, needs finance" },
      alice,
      connectorsFor(s.url),
    );
    expect(escalated.review).toMatchObject({ status: "ESCALATED", flagged: true, version: 2 });
    expect((await listReviews(db, { status: "ESCALATED" })).map((r) => r.id)).toContain(review.id);
    expect(
      (
        await failure(
          decideReview(
            db,
            review.id,
            { expected_version: 2, decision: "reject", reason: "no" },
            alice,
            connectorsFor(s.url),
          ),
        )
      ).invariants,
    ).toEqual(["one_decision_per_person"]);
    const rejected = await decideReview(
      db,
      review.id,
      { expected_version: 2, decision: "reject", reason: "finance says no" },
      carol,
      connectorsFor(s.url),
    );
    expect(rejected.review).toMatchObject({
      status: "REJECTED",
      decisions: [{ kind: "escalate" }, { kind: "reject", actor: carol.identity }],
    });
  });

  it("refuses a decision without a reason, from an agent, or on a stale version", async () => {
    const s = await sandbox();
    const { review } = await frozenRefund(s.url);
    const deps = connectorsFor(s.url);
    const blank = await failure(
      decideReview(db, review.id, { expected_version: 1, decision: "reject", reason: "   " }, alice, deps),
    );
    expect(blank.code).toBe("validation_failed");
    expect(blank.details.errors?.map((e) => e.field)).toEqual(["reason"]);
    expect(
      (
        await failure(
          decideReview(db, review.id, { expected_version: 1, decision: "reject", reason: "x" }, agent, deps),
        )
      ).code,
    ).toBe("forbidden");
    const stale = await failure(
      decideReview(db, review.id, { expected_version: 7, decision: "reject", reason: "x" }, alice, deps),
    );
    expect(stale).toMatchObject({
      code: "version_conflict",
      details: { currentVersion: 1, review: { id: review.id, status: "OPEN" } },
    });
    expect(
      (
        await failure(
          decideReview(db, "rev_missing", { expected_version: 1, decision: "reject", reason: "x" }, alice, deps),
        )
      ).code,
    ).toBe("not_found");
  });
});

describe("reading the queue", () => {
  it("lists open reviews oldest first with execution, task, decisions and waiting time; a review's detail has the execution's history", async () => {
    const s = await sandbox();
    const a = await frozenRefund(s.url);
    const b = await frozenRefund(s.url, { amount: 75_000 });
    const open = (await listReviews(db, { status: "OPEN" })).filter((r) => [a.review.id, b.review.id].includes(r.id));
    expect(open.map((r) => r.id)).toEqual([a.review.id, b.review.id]);
    expect(open[1]).toMatchObject({
      requiredApprovals: 2,
      amountCents: 75_000,
      execution: { status: "NEEDS_HUMAN" },
      task: { status: "WAITING_FOR_HUMAN" },
      decisions: [],
      openAlerts: [],
    });
    expect(open[0]!.waitingMs).toBeGreaterThanOrEqual(0);

    const detail = await getReview(db, a.review.id);
    expect(detail?.events.map((e) => e.toStatus)).toEqual([
      "INTENT_RECORDED",
      "SENT",
      "OUTCOME_UNKNOWN",
      "NEEDS_HUMAN",
    ]);
    expect(await getReview(db, "rev_missing")).toBeNull();
  });
});
