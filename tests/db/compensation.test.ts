import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSealedValues } from "@/lib/stores/field-encryption";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { HttpToolLookupConnector } from "@/lib/connectors/tool-lookup/http-lookup";
import type { ConnectorDeps } from "@/lib/connectors/effects";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { agent, alice, failure, runningTask, taskStatusOf, unreachable, reviewRow } from "@/tests/helpers/effects";
import { payout, payoutTool, registered, sentCall } from "@/tests/helpers/registered-tools";
import { lookupServer, type LookupMode } from "@/tests/helpers/lookup-server";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * Compensation: a known-succeeded effect undone through the compensating
 * tool its definition names, as a call of its own (its own key), linked to
 * the effect and reconciled like any other call; by the agent (a workflow
 * step) or by a person deciding a review on the provider's record.
 */
const db = useTestDatabase();
const SECRET = "lookup-secret-for-compensation";
const verity: ConnectorDeps = { ...unreachable, toolLookups: new HttpToolLookupConnector({ secret: SECRET }) };
const modes = new Map<string, LookupMode>();
let server: Awaited<ReturnType<typeof lookupServer>>;

const reversal = { amount_minor: 1500, currency: "eur", payee: "acct_42", original_payout: "po_1" };

beforeAll(async () => {
  server = await lookupServer(SECRET, modes);
  const reconciliation = { method: "http", url: server.url };
  const unpayout = payoutTool("comp.unpayout", reconciliation);
  const schema = unpayout.request_schema as { required: string[]; properties: Record<string, unknown> };
  schema.required.push("original_payout");
  schema.properties.original_payout = { type: "string", minLength: 1 };
  await registered(db, unpayout);
  await registered(db, payoutTool("comp.other", reconciliation));
  await registered(
    db,
    payoutTool("comp.payout", reconciliation, {
      compensating_tool: "comp.unpayout",
      compensation_request: {
        amount_minor: "/request/amount_minor",
        currency: "/request/currency",
        payee: "/request/payee",
        original_payout: "/result/id",
      },
    }),
  );
  await registered(db, payoutTool("comp.final", reconciliation));
});
afterAll(() => server.close());

/** A payout the provider confirmed: SUCCEEDED on the owner's record. */
async function succeededPayout(tool = "comp.payout") {
  const call = await sentCall(db, tool);
  modes.set(call.idempotencyKey, { kind: "found" });
  const done = await recordOutcome(
    db,
    call.id,
    {
      attempt_id: call.attemptId,
      outcome: "succeeded",
      result: { id: `po_${call.id}` },
      evidence: { execution_id: call.id },
    },
    agent,
    verity,
  );
  expect(done.execution.status).toBe("SUCCEEDED");
  return call;
}

async function versionOf(taskId: string): Promise<number> {
  return (await db.task.findFirstOrThrow({ where: { id: taskId } })).version;
}

function compensate(taskId: string, version: number, over: Record<string, unknown> = {}) {
  return recordIntent(
    db,
    taskId,
    {
      tool_call_id: "undo-1",
      tool: "comp.unpayout",
      request: reversal,
      expected_version: version,
      ...over,
    },
    agent,
  );
}

describe("an agent compensating (a workflow step)", () => {
  it("is refused, changing nothing, unless the effect is this task's, known to have happened, and undone by its declared tool", async () => {
    const effect = await succeededPayout();
    const version = await versionOf(effect.taskId);
    const unsent = await sentCall(db, "comp.payout");
    const elsewhere = await runningTask(db);

    const notDeclared = await failure(
      compensate(effect.taskId, version, { tool: "comp.other", request: payout, compensates_execution_id: effect.id }),
    );
    expect(notDeclared.invariants).toEqual(["compensating_tool_declared"]);
    const otherTask = await failure(
      compensate(elsewhere.id, elsewhere.version, { compensates_execution_id: effect.id }),
    );
    // Another task's effect is answered like one that does not exist: nothing to learn about it.
    expect(otherTask.code).toBe("validation_failed");
    expect(otherTask.details.errors).toEqual([expect.objectContaining({ field: "compensates_execution_id" })]);
    const notKnown = await failure(
      compensate(unsent.taskId, await versionOf(unsent.taskId), { compensates_execution_id: unsent.id }),
    );
    expect(notKnown.invariants).toEqual(["compensates_known_success"]);
    const noCompensator = await succeededPayout("comp.final");
    const undeclared = await failure(
      compensate(noCompensator.taskId, await versionOf(noCompensator.taskId), {
        compensates_execution_id: noCompensator.id,
      }),
    );
    expect(undeclared.invariants).toEqual(["compensating_tool_declared"]);

    expect(await db.execution.count({ where: { compensatesId: { not: null } } })).toBe(0);
    expect(await versionOf(effect.taskId)).toBe(version);
  });

  it("records the compensation under its own key, linked to the effect; one per effect; reconciled like any call", async () => {
    const effect = await succeededPayout();
    const intent = await compensate(effect.taskId, await versionOf(effect.taskId), {
      compensates_execution_id: effect.id,
    });
    expect(intent.kind).toBe("proceed");
    const undo = intent.execution;
    expect(undo).toMatchObject({ tool: "comp.unpayout", compensatesId: effect.id, status: "INTENT_RECORDED" });
    expect(undo.idempotencyKey).not.toBe(effect.idempotencyKey);
    // A checkpoint before the irreversible compensation, as before any irreversible effect.
    expect(await db.checkpoint.count({ where: { taskId: effect.taskId, trigger: "before_irreversible_effect" } })).toBe(
      2,
    );
    const audited = await db.auditEntry.findFirst({
      where: { subjectId: undo.id, action: "execution.intent_recorded" },
    });
    expect(await openSealedValues(db, audited?.details)).toMatchObject({
      reason: `intent recorded: compensates ${effect.id}`,
    });

    // The link is part of the call: a replay that drops it is another call.
    const version = await versionOf(effect.taskId);
    expect((await failure(compensate(effect.taskId, version))).code).toBe("idempotency_conflict");
    // A second compensation of the same effect, under another call id, is refused.
    const second = await failure(
      compensate(effect.taskId, version, { tool_call_id: "undo-2", compensates_execution_id: effect.id }),
    );
    expect(second.invariants).toEqual(["one_compensation_per_effect"]);
    // The replay of the first answers with it.
    const replay = await compensate(effect.taskId, version, { compensates_execution_id: effect.id });
    expect(replay).toMatchObject({ kind: "proceed", execution: { id: undo.id } });

    // Sent, its answer lost: reconciled at the owner's endpoint like any other call.
    await markSent(db, undo.id, { attempt_id: undo.attemptId }, agent);
    await recordOutcome(db, undo.id, { attempt_id: undo.attemptId, outcome: "unknown", error: "timeout" }, agent);
    modes.set(undo.idempotencyKey, { kind: "found" });
    const reconciled = await reconcileExecution(db, undo.id, verity);
    expect(reconciled).toMatchObject({ action: "reconciled_succeeded", lookup: "found" });
    expect(server.questions.at(-1)).toMatchObject({ tool: "comp.unpayout", idempotency_key: undo.idempotencyKey });
  });
});

describe("a person compensating in a review", () => {
  async function reviewOfUnknown(tool = "comp.payout") {
    const call = await sentCall(db, tool);
    modes.set(call.idempotencyKey, { kind: "unknown" });
    await recordOutcome(db, call.id, { attempt_id: call.attemptId, outcome: "unknown", error: "timeout" }, agent);
    await reconcileExecution(db, call.id, verity);
    const review = await reviewRow(db, { executionId: call.id });
    return { call, review };
  }

  it("accepts the provider's record and records the compensation, built from it, for the task's agent to send", async () => {
    const { call, review } = await reviewOfUnknown();
    // The provider answers now: the payout was made.
    modes.set(call.idempotencyKey, { kind: "found" });
    const decided = await decideReview(
      db,
      review.id,
      {
        expected_version: review.version,
        decision: "approve_compensate",
        reason: "paid to a closed account: reverse it",
      },
      alice,
      verity,
    );
    expect(decided.review.status).toBe("APPROVED");
    expect(decided.execution.status).toBe("RECONCILED_SUCCEEDED");
    expect(decided.compensation).toMatchObject({
      tool: "comp.unpayout",
      compensatesId: call.id,
      status: "INTENT_RECORDED",
      createdBy: alice.identity,
      // compensation_request: the effect's request, and the provider's record id from its result.
      request: { ...payout, original_payout: `po_${call.id}` },
    });
    expect(decided.task?.status).toBe("RUNNING");

    // The agent takes it up with the same call, and sends it under the compensation's own key.
    const taken = await recordIntent(
      db,
      call.taskId,
      {
        tool_call_id: decided.compensation!.toolCallId,
        tool: "comp.unpayout",
        request: decided.compensation!.request,
        expected_version: await versionOf(call.taskId),
        compensates_execution_id: call.id,
      },
      agent,
    );
    expect(taken).toMatchObject({
      kind: "proceed",
      execution: { id: decided.compensation!.id },
      task: { status: "WAITING_FOR_TOOL" },
    });
    expect(taken.execution.idempotencyKey).not.toBe(call.idempotencyKey);
  });

  it("takes a call id of its own when the agent already used compensate.<call> for another call", async () => {
    const task = await runningTask(db);
    const call = async (toolCallId: string, tool: string) => {
      const intent = await recordIntent(
        db,
        task.id,
        { tool_call_id: toolCallId, tool, request: payout, expected_version: await versionOf(task.id) },
        agent,
      );
      await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
      return getExecutionRowOrThrow(db, intent.execution.id);
    };
    const other = await call("compensate.call-1", "comp.final");
    modes.set(other.idempotencyKey, { kind: "found" });
    await recordOutcome(
      db,
      other.id,
      { attempt_id: other.attemptId, outcome: "succeeded", evidence: { execution_id: other.id } },
      agent,
      verity,
    );
    const payoutCall = await call("call-1", "comp.payout");
    modes.set(payoutCall.idempotencyKey, { kind: "unknown" });
    await recordOutcome(
      db,
      payoutCall.id,
      { attempt_id: payoutCall.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    await reconcileExecution(db, payoutCall.id, verity);
    const review = await reviewRow(db, { executionId: payoutCall.id });
    modes.set(payoutCall.idempotencyKey, { kind: "found" });
    const decided = await decideReview(
      db,
      review.id,
      { expected_version: review.version, decision: "approve_compensate", reason: "reverse it" },
      alice,
      verity,
    );
    expect(decided.compensation?.toolCallId).toBe("compensate.call-1.2");
  });

  it("is refused, the review left open, for a tool with no compensating tool or with no provider record", async () => {
    const final = await reviewOfUnknown("comp.final");
    modes.set(final.call.idempotencyKey, { kind: "found" });
    const refused = await failure(
      decideReview(
        db,
        final.review.id,
        { expected_version: final.review.version, decision: "approve_compensate", reason: "undo it" },
        alice,
        verity,
      ),
    );
    expect(refused.invariants).toEqual(["compensating_tool_declared"]);

    const { call, review } = await reviewOfUnknown();
    modes.set(call.idempotencyKey, { kind: "not_found" });
    const nothing = await failure(
      decideReview(
        db,
        review.id,
        { expected_version: review.version, decision: "approve_compensate", reason: "undo it" },
        alice,
        verity,
      ),
    );
    expect(nothing.invariants).toEqual(["accept_evidence_requires_provider_record"]);
    for (const id of [final.review.id, review.id]) expect((await reviewRow(db, { id })).status).toBe("OPEN");
    expect(await db.execution.count({ where: { compensatesId: { in: [call.id, final.call.id] } } })).toBe(0);
    expect(await taskStatusOf(db, call.taskId)).toBe("WAITING_FOR_HUMAN");
  });
});
