import { describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { planRestore } from "@/lib/use-cases/checkpoints/plan-restore";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { agent, connectorsFor, executionRow, failure, refund, successMadeAt } from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { sandbox } from "@/tests/sandbox/helpers";

/**
 * Budget reservation (lib/model/executions/budget-reservation.ts): an
 * irreversible call with an amount reserves it against the task's
 * commitment with its intent, is refused past it with nothing written, is
 * released by a known failure, is never reserved twice by a retry, and is
 * checked against the commitment as it is now on resume and on restore.
 */

const db: Db = useTestDatabase();
const engineer: Actor = { identity: "spiffe://verity.local/user/engineer", kind: "user" };

let taskCount = 0;
async function runningTaskCommitting(committedUsd: number): Promise<{ id: string; version: number }> {
  const { task } = await createTask(
    db,
    {
      workflow: "agent-task",
      task_id: `budget-${++taskCount}`,
      intent_id: "refund",
      budget: { currency_committed_usd: committedUsd },
    },
    agent,
  );
  let version = task.version;
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
  return { id: task.id, version };
}

function refundIntent(task: { id: string; version: number }, toolCallId: string, request: Record<string, unknown>) {
  return recordIntent(
    db,
    task.id,
    { tool_call_id: toolCallId, tool: "payments.refund", request, expected_version: task.version },
    agent,
  );
}

/** The call made and reported failed by the provider: the task back in RUNNING. */
async function failedCall(task: { id: string; version: number }, toolCallId: string, request = refund) {
  const intent = await refundIntent(task, toolCallId, request);
  expect(intent.kind).toBe("proceed");
  await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
  const failed = await recordOutcome(
    db,
    intent.execution.id,
    { attempt_id: intent.execution.attemptId, outcome: "failed", error: "503 not_processed" },
    agent,
  );
  expect(failed.execution.status).toBe("FAILED");
  return { executionId: intent.execution.id, task: { id: task.id, version: failed.task!.version } };
}

/** The call made at the sandbox and reported succeeded: the task back in RUNNING, the reservation still counted. */
async function succeededCall(task: { id: string; version: number }, toolCallId: string, request = refund) {
  const intent = await refundIntent(task, toolCallId, request);
  expect(intent.kind).toBe("proceed");
  await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
  const deps = connectorsFor((await sandbox()).url);
  const report = await successMadeAt(deps, await executionRow(db, intent.execution.id));
  const done = await recordOutcome(db, intent.execution.id, report, agent, deps);
  expect(done.execution.status).toBe("SUCCEEDED");
  return { executionId: intent.execution.id, task: { id: task.id, version: done.task!.version } };
}

async function nothingWritten(task: { id: string; version: number }, executionsBefore: number) {
  const now = await getTaskOrThrow(db, task.id);
  expect(now.version).toBe(task.version);
  expect(now.status).toBe("RUNNING");
  expect(await db.execution.count({ where: { taskId: task.id } })).toBe(executionsBefore);
  expect(await db.transition.count({ where: { taskId: task.id } })).toBe(task.version);
}

describe("budget reservation", () => {
  it("an irreversible call within the commitment is reserved with its intent", async () => {
    const task = await runningTaskCommitting(30);
    const intent = await refundIntent(task, "refund-1", refund);
    expect(intent.kind).toBe("proceed");
    expect(await executionRow(db, intent.execution.id)).toMatchObject({ reservedMinor: 2500, reservedCurrency: "usd" });
  });

  it("a reversible call reserves nothing", async () => {
    const task = await runningTaskCommitting(1);
    const intent = await recordIntent(
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
    expect(intent.kind).toBe("proceed");
    expect(await executionRow(db, intent.execution.id)).toMatchObject({ reservedMinor: null, reservedCurrency: null });
  });

  it("a call past the commitment is refused naming the amounts, with nothing written", async () => {
    const task = await runningTaskCommitting(20);
    const refused = await failure(refundIntent(task, "refund-1", refund));
    expect(refused).toMatchObject({
      code: "invariant_violated",
      invariants: ["budget_within_commitment"],
      details: { committedMinor: 2000, reservedMinor: 0, requestedMinor: 2500, currency: "usd" },
    });
    await nothingWritten(task, 0);
  });

  it("a succeeded call's reservation stays counted against the next", async () => {
    const first = await succeededCall(await runningTaskCommitting(30), "refund-1");
    const refused = await failure(refundIntent(first.task, "refund-2", { ...refund, amount_cents: 501 }));
    expect(refused).toMatchObject({
      invariants: ["budget_within_commitment"],
      details: { committedMinor: 3000, reservedMinor: 2500, requestedMinor: 501 },
    });
    await nothingWritten(first.task, 1);
    expect((await refundIntent(first.task, "refund-2", { ...refund, amount_cents: 500 })).kind).toBe("proceed");
  });

  it("a known failure releases its reservation, so another call fits", async () => {
    const failed = await failedCall(await runningTaskCommitting(30), "refund-1");
    const other = await refundIntent(failed.task, "refund-2", { ...refund, amount_cents: 3000, charge_id: "ch_2" });
    expect(other.kind).toBe("proceed");
  });

  it("a retry of the same call does not reserve twice, and is checked against the commitment as it is now", async () => {
    const failed = await failedCall(await runningTaskCommitting(30), "refund-1");
    // 2500 reserved twice would be 5000 > 3000.
    const retry = await refundIntent(failed.task, "refund-1", refund);
    expect(retry).toMatchObject({ kind: "proceed", execution: { id: failed.executionId, attempt: 2 } });
    expect(await db.execution.count({ where: { taskId: failed.task.id } })).toBe(1);
    expect(await executionRow(db, failed.executionId)).toMatchObject({ reservedMinor: 2500 });

    // Failed again, then the commitment lowered below the call: the next retry is refused.
    await markSent(db, failed.executionId, { attempt_id: retry.execution.attemptId }, agent);
    const again = await recordOutcome(
      db,
      failed.executionId,
      { attempt_id: retry.execution.attemptId, outcome: "failed", error: "503 not_processed" },
      agent,
    );
    const lowered = await transitionTask(
      db,
      failed.task.id,
      { expected_version: again.task!.version, patch: { budget: { currency_committed_usd: 20 } } },
      agent,
    );
    const task = { id: failed.task.id, version: lowered.task.version };
    const refused = await failure(refundIntent(task, "refund-1", refund));
    expect(refused).toMatchObject({
      invariants: ["budget_within_commitment"],
      details: { committedMinor: 2000, reservedMinor: 0, requestedMinor: 2500 },
    });
    expect(await executionRow(db, failed.executionId)).toMatchObject({ status: "FAILED", attempt: 2 });
    await nothingWritten(task, 1);
  });

  it("a never-sent call being resumed is checked against the commitment as it is now", async () => {
    const task = await runningTaskCommitting(30);
    const intent = await refundIntent(task, "refund-1", refund);
    const waiting = await getTaskOrThrow(db, task.id);
    // The resume (same intent again, nothing sent yet) fits while the commitment does.
    expect((await refundIntent({ id: task.id, version: waiting.version }, "refund-1", refund)).kind).toBe("proceed");
    const lowered = await transitionTask(
      db,
      task.id,
      { expected_version: waiting.version, patch: { budget: { currency_committed_usd: 10 } } },
      agent,
    );
    const refused = await failure(refundIntent({ id: task.id, version: lowered.task.version }, "refund-1", refund));
    expect(refused).toMatchObject({
      invariants: ["budget_within_commitment"],
      details: { committedMinor: 1000, reservedMinor: 0, requestedMinor: 2500 },
    });
    expect(await executionRow(db, intent.execution.id)).toMatchObject({ status: "INTENT_RECORDED", attempt: 1 });
  });

  it("a commitment is not lowered below what its sent calls reserved, nor withdrawn", async () => {
    const task = await runningTaskCommitting(30);
    const intent = await refundIntent(task, "refund-1", refund);
    await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
    const waiting = await getTaskOrThrow(db, task.id);
    const lower = (usd: number) =>
      transitionTask(
        db,
        task.id,
        { expected_version: waiting.version, patch: { budget: { currency_committed_usd: usd } } },
        agent,
      );
    // 25 USD may already have left: 10 cannot hold it.
    expect((await failure(lower(10))).invariants).toEqual(["budget_within_commitment"]);
    // 0 would mean no limit at all.
    expect((await failure(lower(0))).invariants).toEqual(["budget_commitment_kept"]);
    expect((await getTaskOrThrow(db, task.id)).version).toBe(waiting.version);
    // What still holds the sent call is a change like any other.
    expect((await lower(25)).task.state.budget.currency_committed_usd).toBe(25);
  });

  it("a cost in another currency is refused against a USD commitment rather than converted", async () => {
    const task = await runningTaskCommitting(1000);
    const refused = await failure(refundIntent(task, "refund-1", { ...refund, currency: "eur" }));
    expect(refused).toMatchObject({
      code: "invariant_violated",
      invariants: ["budget_in_commitment_currency"],
      details: { committedMinor: 100_000, requestedMinor: 2500, currency: "eur" },
    });
    await nothingWritten(task, 0);
  });

  it("a task with no commitment (0, the default) records reservations without limiting them", async () => {
    const task = await runningTaskCommitting(0);
    const intent = await refundIntent(task, "refund-1", { ...refund, amount_cents: 9_000_000, currency: "eur" });
    expect(intent.kind).toBe("proceed");
    expect(await executionRow(db, intent.execution.id)).toMatchObject({
      reservedMinor: 9_000_000,
      reservedCurrency: "eur",
    });
  });

  it("a restore re-checks the live reservations against the current commitment, never the checkpoint's", async () => {
    const task = await runningTaskCommitting(30);
    const { checkpoint } = await createCheckpoint(db, task.id, {}, engineer);
    const done = await succeededCall(task, "refund-1");

    // Within the commitment the rewind is allowed.
    const allowed = await planRestore(db, checkpoint.id, { rewind: true }, engineer);
    expect(allowed).toMatchObject({ allowed: true, reauthorization: { budget: { committedUsd: 30 } } });

    // Lowering the commitment below a call that left is refused as a change now; a task whose commitment
    // was lowered before that rule held is stored below what it holds, and the checkpoint (taken at
    // 30 USD, nothing reserved) must not count for it.
    const refusedChange = await failure(
      transitionTask(
        db,
        task.id,
        { expected_version: done.task.version, patch: { budget: { currency_committed_usd: 20 } } },
        agent,
      ),
    );
    expect(refusedChange.invariants).toEqual(["budget_within_commitment"]);
    const row = await db.task.findFirstOrThrow({ where: { id: task.id } });
    const stored = row.state as { budget: { currency_committed_usd: number } };
    stored.budget.currency_committed_usd = 20;
    await db.task.updateMany({ where: { id: task.id }, data: { state: stored } });
    const lowered = { task: { version: row.version } };
    const plan = await planRestore(db, checkpoint.id, { rewind: true }, engineer);
    expect(plan.allowed).toBe(false);
    expect(plan.refusal?.code).toBe("invalid_state");
    expect(plan.refusal?.message).toContain("budget_within_commitment");
    expect(plan.refusal?.message).toContain("(25.00 USD) exceed its current commitment of 20.00 USD");
    expect(plan.reauthorization.budget.committedUsd).toBe(20);

    const refused = await failure(
      restoreCheckpoint(
        db,
        checkpoint.id,
        { expected_version: lowered.task.version, rewind: true, reason: "resume from before the refund" },
        engineer,
      ),
    );
    expect(refused.code).toBe("invariant_violated");
    expect((await getTaskOrThrow(db, task.id)).version).toBe(lowered.task.version);
  });
});
