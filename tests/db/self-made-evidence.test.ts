import { describe, expect, it } from "vitest";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { listExecutionEvents } from "@/lib/stores/execution-store";
import {
  afterTimeout,
  agent,
  connectorsFor,
  executionRow,
  failure,
  refund,
  refundExecution,
  successMadeAt,
  taskStatusOf,
  unreachable,
} from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { post, sandbox } from "@/tests/sandbox/helpers";

/**
 * Issue 11's reproduction: on main f7f9287 an agent recorded `succeeded` for
 * a $ refund it never made, with evidence it wrote itself
 * (`{"execution_id": …}`), and the task moved on; the reconciler raised
 * effect_missing_at_provider seconds later: detected, not prevented. Now an
 * irreversible effect's success stands only on the provider's record.
 */

const db = useTestDatabase();

describe("a success report for an irreversible effect is checked against the provider's record", () => {
  it("self-made evidence (no call behind it) is refused, and nothing changes", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    const before = await executionRow(db, execution.id);
    const refused = await failure(
      recordOutcome(
        db,
        execution.id,
        { attempt_id: execution.attemptId, outcome: "succeeded", evidence: { execution_id: execution.id } },
        agent,
        connectorsFor(s.url),
      ),
    );
    expect(refused).toMatchObject({ code: "invariant_violated", invariants: ["success_confirmed_by_provider"] });
    expect(refused.details).toMatchObject({ executionId: execution.id });
    expect(await executionRow(db, execution.id)).toEqual(before);
    expect(await taskStatusOf(db, execution.taskId)).toBe("WAITING_FOR_TOOL");
  });

  it("a refund the provider made is SUCCEEDED, with the provider's record in the evidence", async () => {
    const s = await sandbox();
    const deps = connectorsFor(s.url);
    const execution = await refundExecution(db);
    const report = await successMadeAt(deps, execution);
    const done = await recordOutcome(db, execution.id, report, agent, deps);
    expect(done.execution.status).toBe("SUCCEEDED");
    expect(done.task?.status).toBe("RUNNING");
    const row = await executionRow(db, execution.id);
    expect(row.evidence).toMatchObject({
      idempotency_key: execution.idempotencyKey,
      confirmed_at_provider: {
        record: { id: report.result.id, amount_cents: refund.amount_cents, idempotency_key: execution.idempotencyKey },
        provider: { lookup: "found" },
      },
    });
    const events = await listExecutionEvents(db, execution.id);
    expect(events.at(-1)?.reason).toContain(`confirmed by the provider's record ${String(report.result.id)}`);
  });

  it("a record under the key that is not the request is raised for people, and the execution stays SENT", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    await post(
      `${s.url}/v1/refunds`,
      { ...refund, amount_cents: 9900, metadata: { execution_id: execution.id, task_id: execution.taskId } },
      { "Idempotency-Key": execution.idempotencyKey },
    );
    const refused = await failure(
      recordOutcome(
        db,
        execution.id,
        {
          attempt_id: execution.attemptId,
          outcome: "succeeded",
          evidence: { idempotency_key: execution.idempotencyKey },
        },
        agent,
        connectorsFor(s.url),
      ),
    );
    expect(refused.invariants).toEqual(["success_matches_provider_record"]);
    expect((await executionRow(db, execution.id)).status).toBe("SENT");
    expect(await db.divergenceAlert.findFirstOrThrow({ where: { executionId: execution.id } })).toMatchObject({
      kind: "effect_mismatch",
      status: "OPEN",
    });
  });

  it("a provider that cannot be asked: the task waits in RECONCILING, and the reconciler's lookup settles the claim", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    const waiting = await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "succeeded", evidence: { execution_id: execution.id } },
      agent,
      unreachable,
    );
    expect(waiting.execution.status).toBe("OUTCOME_UNKNOWN");
    expect(waiting.task?.status).toBe("RECONCILING");
    expect((await listExecutionEvents(db, execution.id)).at(-1)?.reason).toContain("could not be asked to confirm it");
    // The claim was invented: the provider, asked later, has nothing under the key.
    await reconcileExecution(db, execution.id, connectorsFor(s.url), { now: afterTimeout() });
    expect((await executionRow(db, execution.id)).status).toBe("RECONCILED_FAILED");
  });

  it("a retried report of a confirmed success is answered without asking the provider again", async () => {
    const s = await sandbox();
    const deps = connectorsFor(s.url);
    const execution = await refundExecution(db);
    const report = await successMadeAt(deps, execution);
    await recordOutcome(db, execution.id, report, agent, deps);
    const again = await recordOutcome(db, execution.id, report, agent, unreachable);
    expect(again.execution.status).toBe("SUCCEEDED");
    expect(again.task).toBeNull();
  });
});
