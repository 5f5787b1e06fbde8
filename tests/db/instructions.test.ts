import { describe, expect, it } from "vitest";
import { performEffect } from "@/lib/connectors/effects";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent, type IntentResult } from "@/lib/use-cases/executions/record-intent";
import { listExecutionEvents } from "@/lib/stores/execution-store";
import { getCurrentInstruction, getInstructionLedger, recordInstruction } from "@/lib/stores/instructions";
import { getReviewOrThrow } from "@/lib/use-cases/reviews/get-review";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { listTransitions } from "@/lib/use-cases/tasks/task-queries";
import type { Actor } from "@/lib/model/actor";
import {
  agent,
  alice,
  bob,
  connectorsFor,
  executionRow,
  failure,
  refund,
  refundsUnderKey,
  runningTask,
  taskStatusOf,
} from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { sandbox } from "@/tests/sandbox/helpers";
import { executeToolProtocol } from "@/sdk";
import { engineLedger } from "@/tests/sdk/engine-ledger";

const db = useTestDatabase();
const operator: Actor = { identity: "spiffe://verity.local/user/operator", kind: "user" };

const approved = { topic: "refund", directive: "allow", text: "User approved refund", source: "user" } as const;
const doNotRefund = { topic: "refund", directive: "forbid", text: "Do not issue refund" } as const;

async function intent(
  taskId: string,
  version: number,
  instructionId?: string,
  toolCallId = "refund",
): Promise<IntentResult> {
  return recordIntent(
    db,
    taskId,
    {
      tool_call_id: toolCallId,
      tool: "payments.refund",
      request: refund,
      expected_version: version,
      ...(instructionId ? { instruction_id: instructionId } : {}),
    },
    agent,
  );
}

/** A running task whose requester approved the refund (relayed by the agent), then an operator said not to. */
async function approvedThenForbidden() {
  const task = await runningTask(db);
  const first = await recordInstruction(db, task.id, { ...approved, expected_seq: 0 }, agent);
  const second = await recordInstruction(db, task.id, { ...doNotRefund, expected_seq: 1 }, operator);
  return { task, approval: first.instruction, forbid: second.instruction };
}

describe("the ledger", () => {
  it("is a compare-and-swap on its seq: a stale or a future expected_seq is a version_conflict naming the current seq; nothing is written", async () => {
    const task = await runningTask(db);
    const first = await recordInstruction(db, task.id, { ...doNotRefund, expected_seq: 0 }, operator);
    expect(first.instruction).toMatchObject({
      seq: 1,
      authorized: true,
      source: "operator",
      issuedBy: operator.identity,
      supersedesId: null,
    });

    const stale = await failure(
      recordInstruction(
        db,
        task.id,
        { topic: "refund", directive: "allow", text: "go ahead", expected_seq: 0 },
        operator,
      ),
    );
    expect(stale.code).toBe("version_conflict");
    expect(stale.details).toMatchObject({
      currentSeq: 1,
      currentVersion: 1,
      latestInstruction: { id: first.instruction.id, text: "Do not issue refund" },
    });
    const ahead = await failure(
      recordInstruction(
        db,
        task.id,
        { topic: "refund", directive: "allow", text: "go ahead", expected_seq: 5 },
        operator,
      ),
    );
    expect(ahead).toMatchObject({ code: "version_conflict", details: { currentSeq: 1 } });
    expect((await getInstructionLedger(db, task.id)).seq).toBe(1);

    const racing = await Promise.allSettled([
      recordInstruction(db, task.id, { topic: "refund", directive: "allow", text: "a", expected_seq: 1 }, operator),
      recordInstruction(db, task.id, { topic: "refund", directive: "forbid", text: "b", expected_seq: 1 }, alice),
    ]);
    expect(racing.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect((await getInstructionLedger(db, task.id)).items.map((i) => i.seq)).toEqual([2, 1]);
  });

  it("a retry with the same instruction_id returns the first result and writes nothing; the same id with other words is refused", async () => {
    const task = await runningTask(db);
    const body = { ...doNotRefund, expected_seq: 0, instruction_id: "ins-client-1" };
    const first = await recordInstruction(db, task.id, body, operator);
    const again = await recordInstruction(db, task.id, body, operator);
    expect(first.replayed).toBe(false);
    expect(again).toMatchObject({ replayed: true, instruction: { id: "ins-client-1", seq: 1 } });
    expect(await db.taskInstruction.count({ where: { taskId: task.id } })).toBe(1);
    expect(await db.auditEntry.count({ where: { taskId: task.id, action: "instruction.recorded" } })).toBe(1);
    const other = await failure(recordInstruction(db, task.id, { ...body, text: "refund after all" }, operator));
    expect(other.code).toBe("idempotency_conflict");
  });

  it("the latest authorized directive on a topic supersedes the older ones; notes and other topics do not", async () => {
    const task = await runningTask(db);
    const a = (await recordInstruction(db, task.id, { ...approved, expected_seq: 0 }, agent)).instruction;
    const b = (await recordInstruction(db, task.id, { ...doNotRefund, expected_seq: 1 }, operator)).instruction;
    const note = (
      await recordInstruction(
        db,
        task.id,
        { topic: "refund", directive: "note", text: "customer called again", expected_seq: 2 },
        operator,
      )
    ).instruction;
    const other = (
      await recordInstruction(
        db,
        task.id,
        { topic: "customer_note", directive: "allow", text: "tell them", expected_seq: 3 },
        operator,
      )
    ).instruction;
    expect(b.supersedesId).toBe(a.id);
    expect(note.supersedesId).toBeNull();
    expect(other.supersedesId).toBeNull();

    const ledger = await getInstructionLedger(db, task.id);
    expect(ledger.seq).toBe(4);
    expect(ledger.items.map((i) => [i.seq, i.standing])).toEqual([
      [4, { kind: "current" }],
      [3, { kind: "note" }],
      [2, { kind: "current" }],
      [1, { kind: "superseded", byId: b.id, bySeq: 2 }],
    ]);
    expect(ledger.current.refund?.id).toBe(b.id);
    expect(ledger.current.customer_note?.id).toBe(other.id);

    const again = (
      await recordInstruction(
        db,
        task.id,
        { topic: "refund", directive: "allow", text: "refund approved by the manager", expected_seq: 4 },
        alice,
      )
    ).instruction;
    expect(again.supersedesId).toBe(b.id);
    expect((await getCurrentInstruction(db, task.id, "refund"))?.id).toBe(again.id);
  });

  it("agent memory is recorded but never authorized and never supersedes; a relayed allow does not override a person; an agent cannot speak as an operator", async () => {
    const task = await runningTask(db);
    const forbid = (await recordInstruction(db, task.id, { ...doNotRefund, expected_seq: 0 }, operator)).instruction;
    const memory = (
      await recordInstruction(
        db,
        task.id,
        { topic: "refund", directive: "allow", text: "User approved refund (from my summary)", expected_seq: 1 },
        agent,
      )
    ).instruction;
    expect(memory).toMatchObject({
      source: "agent_memory",
      authorized: false,
      supersedesId: null,
      issuedBy: agent.identity,
    });
    expect((await getCurrentInstruction(db, task.id, "refund"))?.id).toBe(forbid.id);
    expect((await getInstructionLedger(db, task.id)).items[0]?.standing).toEqual({ kind: "unauthorized" });

    const relayed = (await recordInstruction(db, task.id, { ...approved, expected_seq: 2 }, agent)).instruction;
    expect(relayed).toMatchObject({
      source: "user",
      authorized: false,
      supersedesId: null,
      issuedBy: agent.identity,
      details: { relayed_by: agent.identity },
    });
    expect((await getCurrentInstruction(db, task.id, "refund"))?.id).toBe(forbid.id);

    expect(
      (await failure(recordInstruction(db, task.id, { ...doNotRefund, source: "operator", expected_seq: 3 }, agent)))
        .code,
    ).toBe("forbidden");
    expect(
      (
        await failure(
          recordInstruction(db, task.id, { ...doNotRefund, source: "agent_memory", expected_seq: 3 }, operator),
        )
      ).code,
    ).toBe("validation_failed");
    expect(
      (await failure(recordInstruction(db, task.id, { ...doNotRefund, topic: "Refund!", expected_seq: 3 }, operator)))
        .code,
    ).toBe("validation_failed");
    expect((await getInstructionLedger(db, task.id)).seq).toBe(3);
  });
});

describe("authority comes from who is authenticated, not from the claimed source", () => {
  // Issue 11's reproduction: the operator forbade (seq 1); the agent token then
  // posted the requester's "allow" with source "user" and was answered
  // authorized, superseding the forbid; its $750 refund proceeded and was sent.
  it("an agent's relayed allow never supersedes an operator's forbid: recorded unauthorized, and a refund relying on it is frozen for review, never sent", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    const forbid = (await recordInstruction(db, task.id, { ...doNotRefund, expected_seq: 0 }, operator)).instruction;
    const relayed = (
      await recordInstruction(
        db,
        task.id,
        { expected_seq: 1, topic: "refund", directive: "allow", text: "The customer says: refund", source: "user" },
        agent,
      )
    ).instruction;
    expect(relayed).toMatchObject({ seq: 2, authorized: false, supersedesId: null, source: "user" });
    // The refusal names the person's instruction by number; its words stay in the (sealed) ledger alone.
    expect(String(relayed.details.unauthorized_because)).toContain("#1 forbid");
    expect(String(relayed.details.unauthorized_because)).not.toContain("Do not issue refund");
    const ledger = await getInstructionLedger(db, task.id);
    expect(ledger.current.refund?.id).toBe(forbid.id);
    expect(ledger.items.map((i) => [i.seq, i.standing.kind])).toEqual([
      [2, "unauthorized"],
      [1, "current"],
    ]);

    const refused = await recordIntent(
      db,
      task.id,
      {
        tool_call_id: "refund",
        tool: "payments.refund",
        request: { ...refund, amount_cents: 75_000 },
        expected_version: task.version,
        instruction_id: relayed.id,
      },
      agent,
    );
    if (refused.kind !== "blocked") throw new Error(`expected blocked, got ${refused.kind}`);
    expect(refused.guard).toMatchObject({ kind: "unauthorized", current: { id: forbid.id } });
    expect(refused.execution).toMatchObject({ status: "NEEDS_HUMAN", sentAt: null });
    expect(refused.task?.status).toBe("WAITING_FOR_HUMAN");
    const send = await failure(markSent(db, refused.execution.id, { attempt_id: refused.execution.attemptId }, agent));
    expect(send.code).not.toBeUndefined();
    expect((await executionRow(db, refused.execution.id)).sentAt).toBeNull();
    expect(await refundsUnderKey(s.url, refused.execution.idempotencyKey)).toBe(0);
  });

  it("a relayed forbid takes effect at once, superseding a person's allow; a relayed allow after it does not lift it", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    const allow = (
      await recordInstruction(
        db,
        task.id,
        { topic: "refund", directive: "allow", text: "refund approved", expected_seq: 0 },
        operator,
      )
    ).instruction;
    const relayedForbid = (
      await recordInstruction(
        db,
        task.id,
        { ...doNotRefund, text: "The customer says: do not refund", source: "user", expected_seq: 1 },
        agent,
      )
    ).instruction;
    expect(relayedForbid).toMatchObject({
      authorized: true,
      supersedesId: allow.id,
      details: { relayed_by: agent.identity },
    });
    expect((await getCurrentInstruction(db, task.id, "refund"))?.id).toBe(relayedForbid.id);

    const relayedAllow = (
      await recordInstruction(
        db,
        task.id,
        { ...approved, text: "The customer says: refund after all", expected_seq: 2 },
        agent,
      )
    ).instruction;
    expect(relayedAllow).toMatchObject({ authorized: false, supersedesId: null });
    expect((await getCurrentInstruction(db, task.id, "refund"))?.id).toBe(relayedForbid.id);

    const blocked = await intent(task.id, task.version, allow.id);
    expect(blocked).toMatchObject({
      kind: "blocked",
      guard: { kind: "superseded", reliedOn: { id: allow.id }, current: { id: relayedForbid.id } },
    });
    if (blocked.kind === "blocked") expect(await refundsUnderKey(s.url, blocked.execution.idempotencyKey)).toBe(0);
  });

  it("a relayed allow stored authorized over a person's forbid before this rule is judged by it on read: the forbid stays current", async () => {
    const task = await runningTask(db);
    const forbid = (await recordInstruction(db, task.id, { ...doNotRefund, expected_seq: 0 }, operator)).instruction;
    const legacy = (await recordInstruction(db, task.id, { ...approved, expected_seq: 1 }, agent)).instruction;
    // What the old rule wrote: authorized, superseding the forbid.
    await db.$executeRaw`UPDATE task_instructions SET authorized = true, supersedes_id = ${forbid.id} WHERE id = ${legacy.id}`;
    expect((await getCurrentInstruction(db, task.id, "refund"))?.id).toBe(forbid.id);
    expect(await intent(task.id, task.version, legacy.id)).toMatchObject({
      kind: "blocked",
      guard: { kind: "superseded", current: { id: forbid.id } },
    });
  });
});

describe("the guard on irreversible calls", () => {
  it("a refund relying on a superseded approval is frozen, not sent; reviewed with both instructions; approve sends exactly one under the same key", async () => {
    const s = await sandbox();
    const { task, approval, forbid } = await approvedThenForbidden();

    const blocked = await intent(task.id, task.version, approval.id);
    if (blocked.kind !== "blocked") throw new Error(`expected blocked, got ${blocked.kind}`);
    // The message (stored as the transition's and the review's reason) names the instructions,
    // never their words: those are confidential, sealed in the ledger, and come with the guard's views.
    expect(blocked.message).toContain("it relies on #1 allow");
    expect(blocked.message).toContain("superseded by #2 forbid");
    expect(blocked.message).not.toContain("User approved refund");
    expect(blocked.guard).toMatchObject({
      kind: "superseded",
      topic: "refund",
      reliedOn: { id: approval.id, text: "User approved refund" },
      current: { id: forbid.id, text: "Do not issue refund" },
    });
    expect(blocked.execution).toMatchObject({
      status: "NEEDS_HUMAN",
      sentAt: null,
      instructionId: approval.id,
      attempt: 1,
    });
    expect(blocked.task?.status).toBe("WAITING_FOR_HUMAN");
    expect(await refundsUnderKey(s.url, blocked.execution.idempotencyKey)).toBe(0);
    expect((await listExecutionEvents(db, blocked.execution.id)).map((e) => e.toStatus)).toEqual([
      "INTENT_RECORDED",
      "NEEDS_HUMAN",
    ]);

    const review = await getReviewOrThrow(db, blocked.reviewId);
    expect(review).toMatchObject({
      status: "OPEN",
      neverSent: true,
      instructions: { frozenByGuard: true, reliedOn: { id: approval.id }, current: { id: forbid.id } },
    });
    expect(review.reason).toContain("superseded by #2 forbid");
    expect(review.instructions).toMatchObject({
      reliedOn: { text: "User approved refund" },
      current: { text: "Do not issue refund" },
    });

    // The agent's retry gets the same answer and writes nothing.
    const retry = await intent(task.id, blocked.task!.version, approval.id);
    expect(retry).toMatchObject({ kind: "blocked", reviewId: blocked.reviewId, task: null });
    expect(await db.execution.count({ where: { taskId: task.id } })).toBe(1);
    // Nobody can call the evidence of a request that never left.
    const accept = await failure(
      decideReview(
        db,
        review.id,
        { expected_version: review.version, decision: "approve_accept_evidence", reason: "?" },
        alice,
        connectorsFor(s.url),
      ),
    );
    expect(accept.invariants).toEqual(["accept_evidence_requires_sent_action"]);

    const decided = await decideReview(
      db,
      review.id,
      { expected_version: review.version, decision: "approve_execute", reason: "the manager overrides: refund" },
      alice,
      connectorsFor(s.url),
    );
    expect(decided).toMatchObject({
      executed: true,
      outcome: "succeeded",
      execution: { status: "SUCCEEDED", attempt: 1, idempotencyKey: blocked.execution.idempotencyKey },
      task: { status: "VALIDATING" },
    });
    expect(await refundsUnderKey(s.url, blocked.execution.idempotencyKey)).toBe(1);
    // A second send under the same key (a confused worker) is the provider's replay, not a second refund.
    await performEffect(await executionRow(db, blocked.execution.id), connectorsFor(s.url));
    expect(await refundsUnderKey(s.url, blocked.execution.idempotencyKey)).toBe(1);
  });

  it("reject cancels the never-sent refund and its task; the provider never sees it", async () => {
    const s = await sandbox();
    const { task, approval } = await approvedThenForbidden();
    const blocked = await intent(task.id, task.version, approval.id);
    if (blocked.kind !== "blocked") throw new Error("expected blocked");
    const decided = await decideReview(
      db,
      blocked.reviewId,
      { expected_version: 1, decision: "reject", reason: "the customer withdrew the request" },
      bob,
      connectorsFor(s.url),
    );
    expect(decided).toMatchObject({
      review: { status: "REJECTED" },
      execution: { status: "CANCELLED" },
      task: { status: "CANCELLED" },
      executed: false,
    });
    expect(await refundsUnderKey(s.url, blocked.execution.idempotencyKey)).toBe(0);
  });

  it("a current forbid blocks a refund that names no instruction; an agent's memory cannot be relied on; a current approval proceeds", async () => {
    const s = await sandbox();
    const forbidden = await runningTask(db);
    await recordInstruction(db, forbidden.id, { ...doNotRefund, expected_seq: 0 }, operator);
    const plain = await intent(forbidden.id, forbidden.version);
    expect(plain).toMatchObject({ kind: "blocked", guard: { kind: "forbidden", reliedOn: null } });
    expect(await taskStatusOf(db, forbidden.id)).toBe("WAITING_FOR_HUMAN");

    const remembered = await runningTask(db);
    const memory = (
      await recordInstruction(
        db,
        remembered.id,
        { topic: "refund", directive: "allow", text: "User approved refund", expected_seq: 0 },
        agent,
      )
    ).instruction;
    expect(await intent(remembered.id, remembered.version, memory.id)).toMatchObject({
      kind: "blocked",
      guard: { kind: "unauthorized" },
    });

    const allowed = await runningTask(db);
    const approval = (await recordInstruction(db, allowed.id, { ...approved, expected_seq: 0 }, agent)).instruction;
    const proceed = await intent(allowed.id, allowed.version, approval.id);
    expect(proceed).toMatchObject({
      kind: "proceed",
      execution: { status: "INTENT_RECORDED", instructionId: approval.id },
    });

    // Names an instruction of another task, or of another topic: refused, nothing written.
    const other = await runningTask(db);
    expect((await failure(intent(other.id, other.version, approval.id))).code).toBe("validation_failed");
    const noteTopic = (
      await recordInstruction(
        db,
        other.id,
        { topic: "customer_note", directive: "allow", text: "ok", expected_seq: 0 },
        operator,
      )
    ).instruction;
    expect((await failure(intent(other.id, other.version, noteTopic.id))).code).toBe("validation_failed");
    expect(await db.execution.count({ where: { taskId: other.id } })).toBe(0);
    expect(await refundsUnderKey(s.url, `vrt:${forbidden.id}:refund`)).toBe(0);
  });

  it("an instruction recorded between the intent and the send stops it at markSent: frozen, reviewed, never sent", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    const approval = (await recordInstruction(db, task.id, { ...approved, expected_seq: 0 }, agent)).instruction;
    const proceed = await intent(task.id, task.version, approval.id);
    if (proceed.kind !== "proceed") throw new Error("expected proceed");
    await recordInstruction(db, task.id, { ...doNotRefund, expected_seq: 1 }, operator);

    const refused = await failure(
      markSent(db, proceed.execution.id, { attempt_id: proceed.execution.attemptId }, agent),
    );
    expect(refused).toMatchObject({ code: "invariant_violated", invariants: ["instruction_current_before_send"] });
    expect(refused.details.reviewId).toBeTruthy();
    expect(await executionRow(db, proceed.execution.id)).toMatchObject({ status: "NEEDS_HUMAN", sentAt: null });
    expect((await listTransitions(db, task.id)).slice(-2).map((t) => t.toStatus)).toEqual([
      "RECONCILING",
      "WAITING_FOR_HUMAN",
    ]);
    expect(await refundsUnderKey(s.url, proceed.execution.idempotencyKey)).toBe(0);
  });

  it("an instruction cannot unsend a refund in flight: it is recorded, names the in-flight execution, and the execution keeps its course", async () => {
    const task = await runningTask(db);
    const proceed = await intent(task.id, task.version);
    if (proceed.kind !== "proceed") throw new Error("expected proceed");
    await markSent(db, proceed.execution.id, { attempt_id: proceed.execution.attemptId }, agent);
    const recorded = await recordInstruction(db, task.id, { ...doNotRefund, expected_seq: 0 }, operator);
    expect(recorded.inFlightExecutionIds).toEqual([proceed.execution.id]);
    expect(recorded.instruction.details).toMatchObject({ in_flight_execution_ids: [proceed.execution.id] });
    expect((await executionRow(db, proceed.execution.id)).status).toBe("SENT");
  });
});

describe("the SDK's executeTool", () => {
  const ledger = engineLedger(db, agent);
  let calls = 0;
  const call = async () => {
    calls++;
    return { outcome: "unknown" as const, error: "must not be called" };
  };
  const refundInput = (task: { id: string; version: number }, instructionId: string) => ({
    taskId: task.id,
    toolCallId: "refund",
    tool: "payments.refund" as const,
    request: refund,
    expectedVersion: task.version,
    instructionId,
  });
  /** Frozen before it was sent, for a review the SDK names; the provider never called. */
  function expectFrozenUnsent(result: Awaited<ReturnType<typeof executeToolProtocol>>) {
    expect(result).toMatchObject({
      kind: "blocked",
      execution: { status: "NEEDS_HUMAN", sent_at: null },
      task: { status: "WAITING_FOR_HUMAN" },
    });
    if (result.kind === "blocked") expect(result.reviewId).not.toBe("");
    expect(calls).toBe(0);
  }

  it("answers `blocked` and never calls the provider, both at the intent and when an instruction lands between intent and send", async () => {
    const { task, approval } = await approvedThenForbidden();
    const blocked = await executeToolProtocol(ledger, refundInput(task, approval.id), call, {
      defaultCallTimeoutMs: 5_000,
    });
    expect(blocked).toMatchObject({
      kind: "blocked",
      task: { status: "WAITING_FOR_HUMAN" },
      instructions: { kind: "superseded", relied_on: { id: approval.id } },
    });
    if (blocked.kind === "blocked") expect(blocked.detail).toContain("superseded by #2 forbid");

    // Only the two-step shape has a moment between intent and send (sent with the intent, the refund is in flight).
    const late = await runningTask(db);
    const allow = (await recordInstruction(db, late.id, { ...approved, expected_seq: 0 }, agent)).instruction;
    const stopped = await executeToolProtocol(ledger, { ...refundInput(late, allow.id), sendWithIntent: false }, call, {
      defaultCallTimeoutMs: 5_000,
      // The operator's instruction lands after the intent, before the send.
      faultPoint: async (point) => {
        if (point === "after_intent")
          await recordInstruction(db, late.id, { ...doNotRefund, expected_seq: 1 }, operator);
      },
    });
    expectFrozenUnsent(stopped);
  });

  it("answers `blocked` when the intent that sends resumes an unsent attempt an instruction has since stopped", async () => {
    const task = await runningTask(db);
    const allow = (await recordInstruction(db, task.id, { ...approved, expected_seq: 0 }, agent)).instruction;
    // A worker of the two-step shape records the intent and dies before sending.
    class Crash extends Error {}
    await expect(
      executeToolProtocol(ledger, { ...refundInput(task, allow.id), sendWithIntent: false }, call, {
        defaultCallTimeoutMs: 5_000,
        faultPoint: (point) => {
          if (point === "after_intent") throw new Crash(point);
        },
      }),
    ).rejects.toBeInstanceOf(Crash);
    await recordInstruction(db, task.id, { ...doNotRefund, expected_seq: 1 }, operator);
    // Its successor sends with the intent (the default): the server's markSent freezes it, and the SDK says so.
    const waiting = await ledger.getTask(task.id);
    const stopped = await executeToolProtocol(ledger, refundInput(waiting, allow.id), call, {
      defaultCallTimeoutMs: 5_000,
    });
    expectFrozenUnsent(stopped);
  });
});
