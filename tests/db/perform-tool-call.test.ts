import { describe, expect, it } from "vitest";
import { performToolCall, type PerformedToolCall } from "@/lib/use-cases/executions/perform-tool-call";
import { recordInstruction } from "@/lib/stores/instructions";
import { idempotencyKeyOf, listExecutionEvents } from "@/lib/stores/execution-store";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { MAX_CHECKPOINT_RECEIPTS } from "@/lib/model/checkpoints/checkpoint-schema";
import type { ConnectorDeps } from "@/lib/connectors/effects";
import type { Actor } from "@/lib/model/actor";
import {
  agent,
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

/**
 * Verity makes the call for its agent through the connector it holds: the
 * intent sent with itself, the provider called under the execution's key,
 * the provider's answer recorded. What must hold: exactly one effect per
 * tool call, whatever the provider answered; nothing called that a person
 * must decide or that no connector backs; a success believed on the
 * provider's answer to Verity's own request, with no lookup.
 */
const db = useTestDatabase();
const operator: Actor = { identity: "spiffe://verity.local/user/operator", kind: "user" };

function call(taskId: string, version: number, deps: ConnectorDeps, extra: Record<string, unknown> = {}) {
  return performToolCall(
    db,
    taskId,
    { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: version, ...extra },
    agent,
    deps,
  );
}

function performed(result: PerformedToolCall) {
  if (result.kind !== "performed") throw new Error(`expected performed, got ${result.kind}`);
  return result;
}

describe("a tool call Verity makes", () => {
  it("succeeds on the provider's answer to Verity's own request: one refund, no lookup, the task moved on", async () => {
    const s = await sandbox();
    // Every lookup fails: an agent's success report could not be confirmed now (it would be OUTCOME_UNKNOWN).
    const deps = connectorsFor(s.url, { lookupFaults: ["error_before_commit"] });
    const task = await runningTask(db);
    const done = performed(await call(task.id, task.version, deps));
    expect(done.outcome).toBe("succeeded");
    expect(done.execution.status).toBe("SUCCEEDED");
    expect(done.task).toMatchObject({ status: "RUNNING", version: task.version + 2 });
    expect(done.leaseConflict).toBeNull();
    const row = await executionRow(db, done.execution.id);
    expect(row.evidence).toMatchObject({
      confirmed_at_provider: { why: "Verity made the call and read the provider's answer to it" },
    });
    expect((await listExecutionEvents(db, row.id)).map((e) => e.toStatus)).toEqual([
      "INTENT_RECORDED",
      "SENT",
      "SUCCEEDED",
    ]);
    expect(await refundsUnderKey(s.url, row.idempotencyKey)).toBe(1);

    // The same tool call again: the receipt, nothing called.
    const again = await call(task.id, done.task!.version, deps);
    expect(again.kind).toBe("receipt");
    expect(await refundsUnderKey(s.url, row.idempotencyKey)).toBe(1);
  });

  it("an answer overtaken by another report of the outcome: the first record stands, the call is recorded once", async () => {
    const s = await sandbox();
    const deps = connectorsFor(s.url);
    // The provider answers Verity's request and, before Verity records the
    // answer, another report has settled the attempt (the agent's, confirmed
    // by a lookup): the outcome, recorded on the row the intent wrote, finds
    // the attempt moved on and answers with the record that stands.
    const overtaken: ConnectorDeps = {
      ...deps,
      payments: {
        refund: async (request, options) => {
          const answer = await deps.payments.refund(request, options);
          if (answer.kind !== "succeeded") throw new Error(`the sandbox answered ${answer.kind}`);
          const [sent] = await db.execution.findMany({ where: { idempotencyKey: request.idempotencyKey } });
          await recordOutcome(
            db,
            sent!.id,
            {
              attempt_id: sent!.attemptId,
              outcome: "succeeded",
              result: { refund_id: answer.refund.id },
              evidence: answer.evidence,
            },
            agent,
            deps,
          );
          return answer;
        },
        provider: deps.payments.provider,
        lookupRefund: (key, options, scope) => deps.payments.lookupRefund(key, options, scope),
      },
    };
    const task = await runningTask(db);
    const done = performed(await call(task.id, task.version, overtaken));
    expect(done.outcome).toBe("succeeded");
    expect(done.execution.status).toBe("SUCCEEDED");
    // The first report moved the task; Verity's answer moved nothing more.
    expect(done.task).toBeNull();
    expect(await taskStatusOf(db, task.id)).toBe("RUNNING");
    const row = await executionRow(db, done.execution.id);
    expect(row.version).toBe(3);
    expect((await listExecutionEvents(db, row.id)).map((e) => e.toStatus)).toEqual([
      "INTENT_RECORDED",
      "SENT",
      "SUCCEEDED",
    ]);
    // The report's confirmation (a lookup), not Verity's reading of its own answer.
    expect(row.evidence).toMatchObject({ confirmed_at_provider: { record: { id: expect.any(String) } } });
    expect(row.evidence).not.toMatchObject({ confirmed_at_provider: { why: expect.any(String) } });
    expect(await refundsUnderKey(s.url, row.idempotencyKey)).toBe(1);
  });

  it("a task past the 10,000 receipts a checkpoint lists: its next irreversible call refused in words, nothing written, nothing called", async () => {
    const s = await sandbox();
    const deps = connectorsFor(s.url);
    const task = await runningTask(db);
    const first = performed(await call(task.id, task.version, deps));
    // 10,000 more receipts on the task: its first refund's row copied under new ids and keys.
    const copied = [
      "task_id, attempt, tool, tool_version, irreversible, request, request_digest, status, version,",
      "created_by, created_at, updated_at, sent_at, settled_at, result, evidence",
    ].join(" ");
    await db.$executeRawUnsafe(
      `INSERT INTO executions (id, tool_call_id, attempt_id, idempotency_key, ${copied})
       SELECT id || '_' || i, 'copy-' || i, attempt_id || '_' || i, idempotency_key || '_' || i, ${copied}
         FROM executions, generate_series(1, ${MAX_CHECKPOINT_RECEIPTS}) i WHERE id = $1`,
      first.execution.id,
    );
    const refused = await failure(call(task.id, first.task!.version, deps, { tool_call_id: "refund-2" }));
    expect(refused).toMatchObject({ code: "invariant_violated", invariants: ["checkpoint_receipts_within_bound"] });
    const [why] = refused.details.violations ?? [];
    expect(why?.message).toContain(`has ${MAX_CHECKPOINT_RECEIPTS + 1} tool receipts`);
    expect(why?.message).toContain("Continue the work in a new task");
    expect(await db.execution.count({ where: { taskId: task.id, toolCallId: "refund-2" } })).toBe(0);
    expect(await taskStatusOf(db, task.id)).toBe("RUNNING");
    expect(await refundsUnderKey(s.url, idempotencyKeyOf("default", task.id, "refund-2"))).toBe(0);
    expect(await refundsUnderKey(s.url, first.execution.idempotencyKey)).toBe(1);
  }, 60_000);

  it("a provider that said nothing happened is recorded FAILED; the same call id then tries again under the same key", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    const failed = performed(
      await call(task.id, task.version, connectorsFor(s.url, { faults: ["error_before_commit"] })),
    );
    expect(failed.outcome).toBe("failed");
    expect(failed.execution).toMatchObject({ status: "FAILED", attempt: 1 });
    expect(failed.task?.status).toBe("RUNNING");
    expect(await refundsUnderKey(s.url, failed.execution.idempotencyKey)).toBe(0);

    const retried = performed(await call(task.id, failed.task!.version, connectorsFor(s.url)));
    expect(retried.execution).toMatchObject({
      id: failed.execution.id,
      attempt: 2,
      idempotencyKey: failed.execution.idempotencyKey,
      status: "SUCCEEDED",
    });
    expect(await refundsUnderKey(s.url, failed.execution.idempotencyKey)).toBe(1);
  });

  it("a lost answer is OUTCOME_UNKNOWN and the task waits for reconciliation; the call is not made again", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    const lost = performed(await call(task.id, task.version, connectorsFor(s.url, { faults: ["drop_response"] })));
    expect(lost.outcome).toBe("unknown");
    expect(lost.execution.status).toBe("OUTCOME_UNKNOWN");
    expect(await taskStatusOf(db, task.id)).toBe("RECONCILING");
    // The provider did apply it; asking again is refused until the reconciler has looked.
    expect(await refundsUnderKey(s.url, lost.execution.idempotencyKey)).toBe(1);
    const again = await failure(call(task.id, lost.task!.version, connectorsFor(s.url)));
    expect(again.invariants).toEqual(["unknown_outcome_reconciled_before_retry"]);
    expect(await refundsUnderKey(s.url, lost.execution.idempotencyKey)).toBe(1);
  });

  it("calls nothing the task's instructions stop: blocked, frozen for people", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    await recordInstruction(
      db,
      task.id,
      { topic: "refund", directive: "forbid", text: "Do not issue refund", expected_seq: 0 },
      operator,
    );
    const blocked = await call(task.id, task.version, connectorsFor(s.url));
    expect(blocked).toMatchObject({ kind: "blocked", guard: { kind: "forbidden" } });
    expect(await executionRow(db, blocked.execution.id)).toMatchObject({ status: "NEEDS_HUMAN", sentAt: null });
    expect(await refundsUnderKey(s.url, blocked.execution.idempotencyKey)).toBe(0);
  });

  it("refuses a tool Verity holds no connector for, writing nothing", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    const refused = await failure(
      performToolCall(
        db,
        task.id,
        { tool_call_id: "ship-1", tool: "acme.ship", request: { parcel: "p1" }, expected_version: task.version },
        agent,
        connectorsFor(s.url),
      ),
    );
    expect(refused).toMatchObject({ code: "invariant_violated", invariants: ["tool_has_connector"] });
    expect(await db.execution.count({ where: { taskId: task.id } })).toBe(0);
    expect(await taskStatusOf(db, task.id)).toBe("RUNNING");
  });
});
