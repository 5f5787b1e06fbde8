import { describe, expect, it } from "vitest";
import { performEffect } from "@/lib/connectors/effects";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { listExecutionEvents } from "@/lib/stores/execution-store";
import { recordInstruction } from "@/lib/stores/instructions";
import type { Actor } from "@/lib/model/actor";
import {
  agent,
  connectorsFor,
  executionRow,
  failure,
  leasedRunningTask,
  refund,
  refundsUnderKey,
  runningTask,
  taskStatusOf,
} from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { sandbox } from "@/tests/sandbox/helpers";

/**
 * recordIntent with `send`: the attempt is marked SENT in the intent's
 * transaction, under markSent's rules (the lease that may send, the
 * instruction guard), so a worker makes one request and one commit fewer
 * before the call. What it must never do: send what markSent would refuse.
 */
const db = useTestDatabase();
const operator: Actor = { identity: "spiffe://verity.local/user/operator", kind: "user" };
const otherWorker: Actor = { identity: "spiffe://verity.local/agent/other-worker", kind: "agent" };

function refundIntent(taskId: string, version: number, extra: Record<string, unknown> = {}) {
  return recordIntent(
    db,
    taskId,
    { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: version, ...extra },
    agent,
  );
}

describe("an intent sent with itself", () => {
  it("is SENT when it answers, with the intent's and the send's records, and its outcome settles it as after markSent", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    const intent = await refundIntent(task.id, task.version, { send: true });
    if (intent.kind !== "proceed") throw new Error(`expected proceed, got ${intent.kind}`);
    expect(intent.execution.status).toBe("SENT");
    expect(intent.task?.status).toBe("WAITING_FOR_TOOL");
    const row = await executionRow(db, intent.execution.id);
    expect(row).toMatchObject({ status: "SENT", attempt: 1 });
    expect(row.sentAt).not.toBeNull();
    // Both steps are on the record, in order, as with a separate markSent.
    expect((await listExecutionEvents(db, row.id)).map((e) => e.toStatus)).toEqual(["INTENT_RECORDED", "SENT"]);
    // The checkpoint before an irreversible effect commits with it.
    expect(await db.checkpoint.count({ where: { taskId: task.id, trigger: "before_irreversible_effect" } })).toBe(1);

    const deps = connectorsFor(s.url);
    const outcome = await performEffect(intent.execution, deps);
    if (outcome.kind !== "succeeded") throw new Error(`refund ${outcome.kind}`);
    const done = await recordOutcome(
      db,
      row.id,
      { attempt_id: row.attemptId, outcome: "succeeded", result: outcome.record, evidence: { ...outcome.evidence } },
      agent,
      deps,
    );
    expect(done.execution.status).toBe("SUCCEEDED");
    expect(done.task?.status).toBe("RUNNING");
    expect(await refundsUnderKey(s.url, row.idempotencyKey)).toBe(1);
  });

  it("is refused to a worker whose lease is not current, and writes nothing", async () => {
    const task = await leasedRunningTask(db, "send-fenced", 60);
    const { version, fencingToken } = task;
    // Another worker, with no lease of its own, while the lease is live.
    const refused = await failure(
      recordIntent(
        db,
        task.id,
        { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: version, send: true },
        otherWorker,
      ),
    );
    expect(refused.code).toBe("lease_conflict");
    expect(await db.execution.count({ where: { taskId: task.id } })).toBe(0);
    expect(await taskStatusOf(db, task.id)).toBe("RUNNING");
    // The holder sends, its token recorded on the attempt.
    const sent = await recordIntent(
      db,
      task.id,
      {
        tool_call_id: "refund-1",
        tool: "payments.refund",
        request: refund,
        expected_version: version,
        fencing_token: fencingToken,
        send: true,
      },
      agent,
    );
    if (sent.kind !== "proceed") throw new Error(`expected proceed, got ${sent.kind}`);
    expect(await executionRow(db, sent.execution.id)).toMatchObject({
      status: "SENT",
      leaseToken: BigInt(fencingToken),
    });
  });

  it("a replay of a settled call gets its receipt, even when a new call's checks would refuse it now", async () => {
    const s = await sandbox();
    const task = await leasedRunningTask(db, "replay-receipt", 60);
    const call = {
      tool_call_id: "refund-1",
      tool: "payments.refund",
      request: refund,
      expected_version: task.version,
      fencing_token: task.fencingToken,
      send: true,
    };
    const intent = await recordIntent(db, task.id, call, agent);
    if (intent.kind !== "proceed") throw new Error(`expected proceed, got ${intent.kind}`);
    const deps = connectorsFor(s.url);
    const outcome = await performEffect(intent.execution, deps);
    if (outcome.kind !== "succeeded") throw new Error(`refund ${outcome.kind}`);
    await recordOutcome(
      db,
      intent.execution.id,
      {
        attempt_id: intent.execution.attemptId,
        outcome: "succeeded",
        result: outcome.record,
        evidence: { ...outcome.evidence },
        fencing_token: task.fencingToken,
      },
      agent,
      deps,
    );
    // The same call again, at the old version and by a worker with no lease, while the lease is live: as a new
    // call it would be refused (lease_conflict); recorded, it is answered with its receipt, and nothing is written.
    const versionBefore = (await db.task.findFirstOrThrow({ where: { id: task.id } })).version;
    const replay = await recordIntent(db, task.id, { ...call, fencing_token: undefined }, otherWorker);
    expect(replay).toMatchObject({ kind: "receipt", execution: { id: intent.execution.id, status: "SUCCEEDED" } });
    expect((await db.task.findFirstOrThrow({ where: { id: task.id } })).version).toBe(versionBefore);
    expect(await refundsUnderKey(s.url, intent.execution.idempotencyKey)).toBe(1);
  });

  it("is frozen, not sent, when the task's instructions stop it: blocked, never SENT", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    await recordInstruction(
      db,
      task.id,
      { topic: "refund", directive: "forbid", text: "Do not issue refund", expected_seq: 0 },
      operator,
    );
    const intent = await refundIntent(task.id, task.version, { send: true });
    expect(intent).toMatchObject({ kind: "blocked", guard: { kind: "forbidden" } });
    expect(await executionRow(db, intent.execution.id)).toMatchObject({ status: "NEEDS_HUMAN", sentAt: null });
    expect(await taskStatusOf(db, task.id)).toBe("WAITING_FOR_HUMAN");
    expect(await refundsUnderKey(s.url, intent.execution.idempotencyKey)).toBe(0);
  });

  it("a retry of it, its answer lost, is told to wait for reconciliation, not to send again", async () => {
    const task = await runningTask(db);
    const first = await refundIntent(task.id, task.version, { send: true });
    if (first.kind !== "proceed") throw new Error(`expected proceed, got ${first.kind}`);
    const retry = await failure(refundIntent(task.id, first.task!.version, { send: true }));
    expect(retry).toMatchObject({
      code: "invariant_violated",
      invariants: ["unknown_outcome_reconciled_before_retry"],
    });
    expect(await executionRow(db, first.execution.id)).toMatchObject({ status: "SENT", attempt: 1 });
  });

  it("an attempt recorded before and never sent is sent by the same request, the same attempt under the same key", async () => {
    const task = await runningTask(db);
    const recorded = await refundIntent(task.id, task.version);
    if (recorded.kind !== "proceed") throw new Error(`expected proceed, got ${recorded.kind}`);
    expect(recorded.execution.status).toBe("INTENT_RECORDED");
    // The worker died before sending; it (or the lease's next holder) asks again, with send.
    const resumed = await refundIntent(task.id, recorded.task!.version, { send: true });
    if (resumed.kind !== "proceed") throw new Error(`expected proceed, got ${resumed.kind}`);
    expect(resumed.execution).toMatchObject({
      id: recorded.execution.id,
      attemptId: recorded.execution.attemptId,
      idempotencyKey: recorded.execution.idempotencyKey,
      status: "SENT",
    });
    expect((await executionRow(db, recorded.execution.id)).status).toBe("SENT");
  });

  it("a new attempt after a known failure is sent with its intent, under the same key", async () => {
    const task = await runningTask(db);
    const first = await refundIntent(task.id, task.version, { send: true });
    if (first.kind !== "proceed") throw new Error(`expected proceed, got ${first.kind}`);
    const failed = await recordOutcome(
      db,
      first.execution.id,
      { attempt_id: first.execution.attemptId, outcome: "failed", error: "503 not_processed" },
      agent,
    );
    const second = await refundIntent(task.id, failed.task!.version, { send: true });
    if (second.kind !== "proceed") throw new Error(`expected proceed, got ${second.kind}`);
    expect(second.execution).toMatchObject({
      id: first.execution.id,
      attempt: 2,
      idempotencyKey: first.execution.idempotencyKey,
      status: "SENT",
    });
    // The first attempt can no longer be sent or report.
    expect(
      (await failure(markSent(db, first.execution.id, { attempt_id: first.execution.attemptId }, agent))).code,
    ).toBe("version_conflict");
  });
});
