import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpToolLookupConnector } from "@/lib/connectors/tool-lookup/http-lookup";
import type { ConnectorDeps } from "@/lib/connectors/effects";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { registerTool } from "@/lib/use-cases/tools/register-tool";
import { retireTool } from "@/lib/use-cases/tools/retire-tool";
import { recordInstruction } from "@/lib/stores/instructions";
import type { Actor } from "@/lib/model/actor";
import { getToolOrThrow, listTools } from "@/lib/use-cases/tools/get-tool";
import { agent, alice, failure, runningTask, taskStatusOf, unreachable, reviewRow } from "@/tests/helpers/effects";
import { admin, payout, payoutTool, registered, sentCall } from "@/tests/helpers/registered-tools";
import { lookupServer, type LookupMode } from "@/tests/helpers/lookup-server";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * A tool Verity did not write, registered as data, gets the engine's
 * guarantees with no code of its own: its schema, irreversibility, topic,
 * amount and identity fields come from the version its call was recorded
 * under, and an unknown outcome is settled by its owner's signed lookup
 * endpoint (a real HTTP server here), or by people when it is `manual`.
 */
const db = useTestDatabase();
const SECRET = "lookup-secret-for-the-test";
const verity = (secret = SECRET): ConnectorDeps => ({
  ...unreachable,
  toolLookups: new HttpToolLookupConnector({ secret }),
});

describe("the registry", () => {
  it("registers versions immutably: a replay is answered, other content under a version is 409, an older version 422", async () => {
    const def = payoutTool("reg.payout", { method: "manual" });
    expect((await registerTool(db, def, admin)).kind).toBe("registered");
    expect((await registerTool(db, def, admin)).kind).toBe("already_registered");
    expect((await failure(registerTool(db, { ...def, description: "other words" }, admin))).code).toBe(
      "idempotency_conflict",
    );
    expect((await registerTool(db, { ...def, version: 3 }, admin)).kind).toBe("registered");
    const older = await failure(registerTool(db, { ...def, version: 2 }, admin));
    expect(older.code).toBe("definition_invalid");
    expect(older.details.problems).toEqual([expect.objectContaining({ path: "$.version" })]);
    const tool = await getToolOrThrow(db, "reg.payout");
    expect(tool.versions.map((v) => v.version)).toEqual([3, 1]);
    expect((await listTools(db)).map((t) => t.name)).toEqual(
      expect.arrayContaining(["payments.refund", "crm.add_note", "reg.payout"]),
    );
    const audit = await db.auditEntry.findMany({ where: { action: "tool.registered", subjectId: "reg.payout" } });
    expect(audit).toHaveLength(2);
  });

  it("refuses a bad definition with every problem at its JSON path, and a built-in's name", async () => {
    const bad = await failure(
      registerTool(
        db,
        { ...payoutTool("reg.bad", { method: "worker", deadline_seconds: 1 }), identity_fields: ["/nope"] },
        admin,
      ),
    );
    expect(bad.code).toBe("definition_invalid");
    expect((bad.details.problems as Array<{ path: string }>).map((p) => p.path)).toEqual([
      "$.reconciliation.deadline_seconds",
    ]);
    const taken = await failure(registerTool(db, payoutTool("payments.refund", { method: "manual" }), admin));
    expect(taken.details.problems).toEqual([expect.objectContaining({ path: "$.name" })]);
    expect(await db.toolVersion.count({ where: { name: { in: ["reg.bad"] } } })).toBe(0);
  });

  it("validates a call's request against the registered schema, naming each field; irreversible comes from the registry", async () => {
    await registered(db, payoutTool("reg.schema", { method: "manual" }));
    const task = await runningTask(db);
    const refused = await failure(
      recordIntent(
        db,
        task.id,
        {
          tool_call_id: "c1",
          tool: "reg.schema",
          request: { amount_minor: "lots", payee: "" },
          expected_version: task.version,
        },
        agent,
      ),
    );
    expect(refused.code).toBe("validation_failed");
    expect(refused.details.errors?.map((e) => e.field).sort()).toEqual([
      "request.amount_minor",
      "request.currency",
      "request.payee",
    ]);
    const unknownTool = await failure(
      recordIntent(
        db,
        task.id,
        { tool_call_id: "c1", tool: "reg.nobody", request: {}, expected_version: task.version },
        agent,
      ),
    );
    expect(unknownTool.details.errors).toEqual([expect.objectContaining({ field: "tool" })]);
    const intent = await recordIntent(
      db,
      task.id,
      { tool_call_id: "c1", tool: "reg.schema", request: payout, expected_version: task.version },
      agent,
    );
    expect(intent.execution).toMatchObject({ tool: "reg.schema", toolVersion: 1, irreversible: true });
    // The checkpoint before an irreversible effect commits with the intent, for this tool as for a refund.
    expect(await db.checkpoint.count({ where: { taskId: task.id, trigger: "before_irreversible_effect" } })).toBe(1);
  });

  it("keeps a recorded call on its version; a retired tool takes no new intents, but its recorded calls settle", async () => {
    await registered(db, payoutTool("reg.retire", { method: "manual" }));
    const call = await sentCall(db, "reg.retire");
    // Version 2 adds a required field: the call recorded under version 1 is still judged by version 1.
    const v2 = payoutTool("reg.retire", { method: "manual" }, { version: 2 });
    (v2.request_schema as { required: string[] }).required.push("memo");
    (v2.request_schema as { properties: Record<string, unknown> }).properties.memo = { type: "string" };
    await registered(db, v2);
    await retireTool(db, "reg.retire", { reason: "replaced by payouts v3" }, admin);
    const task = await runningTask(db);
    const retired = await failure(
      recordIntent(
        db,
        task.id,
        { tool_call_id: "c2", tool: "reg.retire", request: { ...payout, memo: "x" }, expected_version: task.version },
        agent,
      ),
    );
    expect(retired.invariants).toEqual(["tool_not_retired"]);
    const settled = await recordOutcome(
      db,
      call.id,
      { attempt_id: call.attemptId, outcome: "failed", error: "payee closed", result: { retryable: false } },
      agent,
    );
    expect(settled.execution).toMatchObject({ status: "FAILED", toolVersion: 1 });
    expect(await db.auditEntry.count({ where: { action: "tool.retired", subjectId: "reg.retire" } })).toBe(1);
  });

  it("four eyes reads the amount where the definition says it is", async () => {
    await registered(db, payoutTool("reg.fours", { method: "manual" }));
    const small = await sentCall(db, "reg.fours", { ...payout, amount_minor: 100 });
    const large = await sentCall(db, "reg.fours", { ...payout, amount_minor: 60_000 });
    for (const call of [small, large])
      await recordOutcome(db, call.id, { attempt_id: call.attemptId, outcome: "unknown", error: "timeout" }, agent);
    // manual: nobody but people can say, so the unknown outcome goes straight to the review queue.
    for (const call of [small, large])
      expect((await reconcileExecution(db, call.id, unreachable)).action).toBe("needs_human");
    const reviews = await db.review.findMany({ where: { executionId: { in: [small.id, large.id] } } });
    const byExecution = new Map(reviews.map((r) => [r.executionId, r]));
    expect(byExecution.get(small.id)).toMatchObject({ amountCents: 100, currency: "eur", requiredApprovals: 1 });
    expect(byExecution.get(large.id)).toMatchObject({ amountCents: 60_000, currency: "eur", requiredApprovals: 2 });
  });
});

describe("a registered call the instruction guard froze", () => {
  const operator: Actor = { identity: "spiffe://verity.local/user/operator", kind: "user" };
  const versionOf = async (taskId: string) => (await db.task.findFirstOrThrow({ where: { id: taskId } })).version;
  it("once people approve it, its agent sends it, unfrozen; an instruction recorded after their approval still stops it", async () => {
    await registered(db, payoutTool("guard.payout", { method: "manual" }));
    const forbidLater = async (taskId: string, seq: number, text: string) =>
      recordInstruction(db, taskId, { topic: "payout", directive: "forbid", text, expected_seq: seq }, operator);
    const freeze = async () => {
      const task = await runningTask(db);
      await forbidLater(task.id, 0, "no payouts today");
      const frozen = await recordIntent(
        db,
        task.id,
        { tool_call_id: "call-1", tool: "guard.payout", request: payout, expected_version: await versionOf(task.id) },
        agent,
      );
      expect(frozen.kind).toBe("blocked");
      const review = await reviewRow(db, { executionId: frozen.execution.id });
      const decided = await decideReview(
        db,
        review.id,
        { expected_version: review.version, decision: "approve_execute", reason: "this payee is the exception" },
        alice,
        unreachable,
      );
      expect(decided.execution.status).toBe("INTENT_RECORDED");
      const taken = await recordIntent(
        db,
        task.id,
        { tool_call_id: "call-1", tool: "guard.payout", request: payout, expected_version: await versionOf(task.id) },
        agent,
      );
      expect(taken.kind).toBe("proceed");
      return { taskId: task.id, execution: taken.execution };
    };

    const approved = await freeze();
    const sent = await markSent(db, approved.execution.id, { attempt_id: approved.execution.attemptId }, agent);
    expect(sent.status).toBe("SENT");

    const overtaken = await freeze();
    await forbidLater(overtaken.taskId, 1, "the payee's account was closed");
    const stopped = await failure(
      markSent(db, overtaken.execution.id, { attempt_id: overtaken.execution.attemptId }, agent),
    );
    expect(stopped.invariants).toEqual(["instruction_current_before_send"]);
  });
});

describe("an http-reconciled tool, looked up at its owner's signed endpoint", () => {
  const modes = new Map<string, LookupMode>();
  let server: Awaited<ReturnType<typeof lookupServer>>;
  beforeAll(async () => {
    server = await lookupServer(SECRET, modes);
    await registered(db, payoutTool("http.payout", { method: "http", url: server.url }));
  });
  afterAll(() => server.close());

  async function unknownCall(mode: LookupMode) {
    const call = await sentCall(db, "http.payout");
    modes.set(call.idempotencyKey, mode);
    await recordOutcome(db, call.id, { attempt_id: call.attemptId, outcome: "unknown", error: "timeout" }, agent);
    return call;
  }

  it("found: RECONCILED_SUCCEEDED with the owner's record as evidence, the task goes on; the question was signed and complete", async () => {
    const call = await unknownCall({ kind: "found" });
    const result = await reconcileExecution(db, call.id, verity());
    expect(result).toMatchObject({ action: "reconciled_succeeded", lookup: "found" });
    expect(result.execution.status).toBe("RECONCILED_SUCCEEDED");
    expect(result.execution.evidence).toMatchObject({
      record: { id: `po_${call.id}` },
      provider: { provider: expect.stringMatching(/^http-lookup:/) },
    });
    expect(await taskStatusOf(db, call.taskId)).toBe("VALIDATING");
    expect(server.questions.at(-1)).toEqual({
      tool: "http.payout",
      tool_version: 1,
      idempotency_key: call.idempotencyKey,
      execution_id: call.id,
      task_id: call.taskId,
      request: payout,
    });
  });

  it("found, but another payout under our key: effect_mismatch, people decide", async () => {
    const call = await unknownCall({ kind: "found", record: { amount_minor: 99_999 } });
    const result = await reconcileExecution(db, call.id, verity());
    expect(result.action).toBe("effect_mismatch");
    expect(await db.divergenceAlert.count({ where: { executionId: call.id, kind: "effect_mismatch" } })).toBe(1);
  });

  it("not found: RECONCILED_FAILED, safe to retry under the same key", async () => {
    const call = await unknownCall({ kind: "not_found" });
    const result = await reconcileExecution(db, call.id, verity());
    expect(result).toMatchObject({ action: "reconciled_failed", lookup: "not_found" });
    expect(result.execution.retry).toMatchObject({ safe: true, code: "never_applied", maxAttempts: 2 });
    expect(await taskStatusOf(db, call.taskId)).toBe("RUNNING");
  });

  it.each([
    ["the owner cannot say", { kind: "unknown" } as const, "in_flight"],
    ["an answer signed with another secret", { kind: "signed_wrongly" } as const, "bad_signature"],
    ["a 503", { kind: "status", status: 503 } as const, "server_error"],
  ])("%s: unknown, NEEDS_HUMAN with a review, never a guess", async (_name, mode, reason) => {
    const call = await unknownCall(mode);
    const result = await reconcileExecution(db, call.id, verity());
    expect(result).toMatchObject({ action: "needs_human", lookup: "unknown" });
    expect(result.execution.status).toBe("NEEDS_HUMAN");
    const review = await reviewRow(db, { executionId: call.id });
    expect(review.reason).toContain(reason);
  });

  it("a question the owner refuses (Verity signing with another secret) is unknown too", async () => {
    const call = await unknownCall({ kind: "found" });
    const result = await reconcileExecution(db, call.id, verity("a-different-secret"));
    expect(result.action).toBe("needs_human");
    expect((await reviewRow(db, { executionId: call.id })).reason).toContain("401");
  });

  it("a success report stands only on the owner's record; approve & execute releases the call to its agent, who sends it under the same key", async () => {
    // The report is checked at the owner's endpoint before it is believed.
    const ok = await sentCall(db, "http.payout");
    modes.set(ok.idempotencyKey, { kind: "found" });
    const reported = await recordOutcome(
      db,
      ok.id,
      { attempt_id: ok.attemptId, outcome: "succeeded", evidence: { execution_id: ok.id } },
      agent,
      verity(),
    );
    expect(reported.execution.status).toBe("SUCCEEDED");
    expect(reported.execution.evidence).toMatchObject({ confirmed_at_provider: { record: { id: `po_${ok.id}` } } });

    const call = await unknownCall({ kind: "unknown" });
    await reconcileExecution(db, call.id, verity());
    const review = await reviewRow(db, { executionId: call.id });
    const decided = await decideReview(
      db,
      review.id,
      { expected_version: review.version, decision: "approve_execute", reason: "the payee confirmed nothing arrived" },
      alice,
      verity(),
    );
    expect(decided).toMatchObject({ executed: false, review: { status: "APPROVED" } });
    expect(decided.execution).toMatchObject({
      status: "INTENT_RECORDED",
      attempt: 2,
      idempotencyKey: call.idempotencyKey,
    });
    expect(decided.task?.status).toBe("RUNNING");
    // The agent holding the task takes it up with the same intent, and sends the same call under the same key.
    const task = await db.task.findFirstOrThrow({ where: { id: call.taskId } });
    const again = await recordIntent(
      db,
      call.taskId,
      { tool_call_id: "call-1", tool: "http.payout", request: payout, expected_version: task.version },
      agent,
    );
    expect(again).toMatchObject({
      kind: "proceed",
      execution: { id: call.id, attemptId: `${call.id}.2` },
      task: { status: "WAITING_FOR_TOOL" },
    });
    await markSent(db, call.id, { attempt_id: `${call.id}.2` }, agent);
    modes.set(call.idempotencyKey, { kind: "found" });
    const done = await recordOutcome(
      db,
      call.id,
      { attempt_id: `${call.id}.2`, outcome: "succeeded", evidence: { execution_id: call.id } },
      agent,
      verity(),
    );
    expect(done.execution.status).toBe("SUCCEEDED");
    expect(await taskStatusOf(db, call.taskId)).toBe("RUNNING");
  });
});
