import { describe, expect, it } from "vitest";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import {
  checkConsistency,
  fetchProviderRecords,
  type ConsistencyFinding,
  type ConsistencyReport,
  type FindingCode,
} from "@/lib/use-cases/monitor/consistency-check";
import { formatConsistencyReport } from "@/lib/use-cases/monitor/consistency-report";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { performEffect } from "@/lib/connectors/effects";
import { raiseDivergence } from "@/lib/use-cases/alerts/divergence";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { acquireLease } from "@/lib/stores/leases";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { seedDemoData } from "@/programs/seed/seed";
import { agent, connectorsFor, refund, runningTask, unreachable } from "@/tests/helpers/effects";
import { completedRefund } from "@/tests/helpers/completed-refund";
import { ownerClientOf, useTestDatabase } from "@/tests/helpers/use-test-database";
import { post, sandbox } from "@/tests/sandbox/helpers";

/**
 * The consistency checker against data that is right (real runs through the
 * engine and a real sandbox provider: no finding) and against data broken on
 * purpose, one problem per task, each found by name. Every broken case
 * asserts the finding on its own task, so the cases can share a database.
 */

const system: Actor = { identity: "spiffe://verity.local/system/test", kind: "system" };
const engineer: Actor = { identity: "spiffe://verity.local/user/engineer", kind: "user" };
const hourLater = () => new Date(Date.now() + 3_600_000);

function findingsOf(report: ConsistencyReport, taskId: string): ConsistencyFinding[] {
  return report.findings.filter((f) => f.taskId === taskId);
}
function codesOf(report: ConsistencyReport, taskId: string): FindingCode[] {
  return [...new Set(findingsOf(report, taskId).map((f) => f.code))].sort();
}

describe("consistent data: no finding", () => {
  const db = useTestDatabase();

  it("completed refunds, a task at rest in each kind of state, a failure with its reason, and the provider's records: CONSISTENT", async () => {
    const s = await sandbox();
    await completedRefund(db, s.url);
    await completedRefund(db, s.url);
    await runningTask(db);
    await createTask(db, { workflow: "delivery", intent_id: "at-rest" }, agent);
    const failing = await runningTask(db);
    await transitionTask(
      db,
      failing.id,
      { expected_version: failing.version, to: "FAILED", reason: "the order could not be found in the shop" },
      agent,
    );
    // Frozen for people: a lookup nobody could answer opened a review.
    const frozen = await runningTask(db);
    const intent = await recordIntent(
      db,
      frozen.id,
      { tool_call_id: "refund", tool: "payments.refund", request: refund, expected_version: frozen.version },
      agent,
    );
    if (intent.kind !== "proceed") throw new Error(intent.kind);
    await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
    await recordOutcome(
      db,
      intent.execution.id,
      { attempt_id: intent.execution.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    expect((await reconcileExecution(db, intent.execution.id, unreachable)).action).toBe("needs_human");
    // Rewound from a checkpoint: the restore is a transition too, audited as task.restored.
    const { task: restored } = await createTask(db, { workflow: "agent-task", intent_id: "rewound" }, agent);
    let version = (await transitionTask(db, restored.id, { expected_version: 1, to: "PLANNING" }, agent)).task.version;
    const { checkpoint } = await createCheckpoint(db, restored.id, { expected_version: version }, engineer);
    version = (await transitionTask(db, restored.id, { expected_version: version, to: "READY" }, agent)).task.version;
    await restoreCheckpoint(
      db,
      checkpoint.id,
      { expected_version: version, rewind: true, reason: "back to planning" },
      engineer,
    );

    const report = await checkConsistency(db, { provider: await fetchProviderRecords(s.url), now: hourLater() });
    expect(report.findings).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.counts).toMatchObject({ tasks: 7, executions: 3, providerRefunds: 2, providerNotes: 0 });
    expect(Object.values(report.checks).every((c) => c.findings === 0 && !c.skipped)).toBe(true);
    expect(report.checks.transition_logs.examined).toBe(report.counts.transitions);
    // The frozen refund waits in the review queue: that is where it belongs, not a deadline missed.
    expect(report.withPeople).toEqual([]);
    expect(formatConsistencyReport(report)).toMatch(/^CONSISTENT: no findings over 7 tasks/);
  });

  it("the seeded demo data is consistent too", async () => {
    await seedDemoData(db, { extraTasks: 12 });
    const report = await checkConsistency(db, { now: hourLater() });
    expect(report.findings, formatConsistencyReport(report)).toEqual([]);
  });

  it("without the provider's records the provider check says it was skipped, and the rest still runs", async () => {
    const report = await checkConsistency(db);
    expect(report.checks.provider.skipped).toMatch(/no provider records/);
    expect(report.counts.providerRefunds).toBeNull();
    expect(report.ok).toBe(true);
  });
});

describe("broken data: each problem found by name", () => {
  const db = useTestDatabase();

  describe("transition logs", () => {
    it("a deleted transition is a gap; a row naming the wrong previous version is found; so is a task row changed outside the engine", async () => {
      const gap = await runningTask(db); // versions 1..4
      await db.$executeRaw`DELETE FROM transitions WHERE task_id = ${gap.id} AND to_version = 2`;
      const wrong = await runningTask(db);
      await db.$executeRaw`UPDATE transitions SET from_version = 1, from_status = 'RECEIVED' WHERE task_id = ${wrong.id} AND to_version = 3`;
      const outside = await runningTask(db);
      await db.$executeRaw`UPDATE tasks SET version = 5 WHERE id = ${outside.id}`;
      const stateOnly = await runningTask(db);
      await db.$executeRaw`UPDATE tasks SET state = jsonb_set(state, '{budget,tokens_spent}', '99') WHERE id = ${stateOnly.id}`;

      const report = await checkConsistency(db);
      expect(report.ok).toBe(false);
      expect(codesOf(report, gap.id)).toEqual(["transition_log_gap"]);
      expect(findingsOf(report, gap.id)[0]?.message).toContain("jumps from version 1 to 3: version(s) 2–2 are missing");
      expect(codesOf(report, wrong.id)).toEqual(["transition_wrong_previous"]);
      expect(findingsOf(report, wrong.id)[0]?.message).toContain(
        "came from version 1 (RECEIVED), but the log before it ends at 2 (PLANNING)",
      );
      // The version column disagrees with the log and with the state document.
      expect(codesOf(report, outside.id)).toEqual(["state_invariant_broken", "transition_log_head_mismatch"]);
      expect(codesOf(report, stateOnly.id)).toEqual(["transition_log_head_mismatch"]);
      expect(findingsOf(report, stateOnly.id)[0]?.message).toContain("changed outside the engine");
    });

    it("a task with no log at all, a transition whose state says another version, and a transition written without its audit entry", async () => {
      const bare = await runningTask(db);
      await db.$executeRaw`DELETE FROM transitions WHERE task_id = ${bare.id}`;
      const lying = await runningTask(db);
      await db.$executeRaw`UPDATE transitions SET state_after = jsonb_set(state_after, '{status}', '"READY"') WHERE task_id = ${lying.id} AND to_version = 2`;
      // A change and its log row written around the engine: no audit entry.
      const unaudited = await runningTask(db);
      await db.$executeRaw`
        WITH u AS (UPDATE tasks SET version = 5, status = 'WAITING_FOR_HUMAN',
                          state = jsonb_set(jsonb_set(state, '{version}', '5'), '{status}', '"WAITING_FOR_HUMAN"')
                    WHERE id = ${unaudited.id} RETURNING id, state, updated_at)
        INSERT INTO transitions (id, task_id, from_version, to_version, from_status, to_status, actor, actor_kind, reason, patch, state_after, request_digest, created_at)
        SELECT 'tr_sneaky', u.id, 4, 5, 'RUNNING', 'WAITING_FOR_HUMAN', 'someone', 'agent', 'by hand', '{}', u.state, 'x', u.updated_at FROM u`;

      const report = await checkConsistency(db);
      expect(codesOf(report, bare.id)).toEqual(["task_without_transitions"]);
      expect(codesOf(report, lying.id)).toEqual(["transition_state_mismatch"]);
      expect(codesOf(report, unaudited.id)).toEqual(["transition_not_audited"]);
      expect(findingsOf(report, unaudited.id)[0]?.details).toMatchObject({ transition_id: "tr_sneaky", to_version: 5 });
    });
  });

  it("an edited audit entry breaks its chain, named with its task", async () => {
    const task = await runningTask(db);
    // Only the table's owner may disable its trigger.
    const owner = ownerClientOf(db);
    await owner.$executeRawUnsafe("ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only");
    try {
      await owner.$executeRaw`UPDATE audit_entries SET actor = 'spiffe://verity.local/agent/someone-else' WHERE stream = ${`task:${task.id}`} AND seq = 2`;
    } finally {
      await owner.$executeRawUnsafe("ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only");
    }
    const report = await checkConsistency(db);
    expect(codesOf(report, task.id)).toEqual(["audit_chain_broken"]);
    expect(findingsOf(report, task.id)[0]?.message).toMatch(
      new RegExp(`audit chain task:${task.id} is broken at seq 2 \\(entry_edited\\)`),
    );
  });

  describe("effects of completed and failed tasks", () => {
    it("completed with a mandatory subtask open; completed while its refund FAILED; success whose evidence names another key; a note still in doubt after completion", async () => {
      const s = await sandbox();
      const open = await completedRefund(db, s.url);
      await db.$executeRaw`UPDATE tasks SET state = jsonb_set(state, '{subtasks,0,status}', '"PENDING"') WHERE id = ${open.taskId}`;
      await db.$executeRaw`UPDATE transitions SET state_after = t.state FROM tasks t WHERE transitions.task_id = t.id AND t.id = ${open.taskId} AND to_version = t.version`;
      const failedRefund = await completedRefund(db, s.url);
      await db.$executeRaw`UPDATE executions SET status = 'FAILED' WHERE id = ${failedRefund.execution.id}`;
      const otherEvidence = await completedRefund(db, s.url);
      await db.$executeRaw`UPDATE executions SET evidence = '{"idempotency_key": "vrt:someone-else:refund"}' WHERE id = ${otherEvidence.execution.id}`;
      const noteInDoubt = await completedRefund(db, s.url);
      await db.$executeRaw`
        INSERT INTO executions (id, task_id, tool_call_id, attempt, attempt_id, idempotency_key, tool, irreversible, request, request_digest, status, version, created_by, updated_at)
        VALUES ('exec_note_doubt', ${noteInDoubt.taskId}, 'notify-customer', 1, 'exec_note_doubt.1', ${`vrt:${noteInDoubt.taskId}:notify-customer`}, 'crm.add_note', false,
                '{"customer_id": "cus_1", "text": "refunded"}', 'x', 'OUTCOME_UNKNOWN', 2, 'someone', now())`;

      const report = await checkConsistency(db, { provider: await fetchProviderRecords(s.url) });
      expect(codesOf(report, open.taskId)).toEqual(["completed_with_open_mandatory_subtask"]);
      // The provider holds the refund the ledger calls failed: found from both sides.
      expect(codesOf(report, failedRefund.taskId)).toEqual([
        "mandatory_effect_not_succeeded",
        "provider_effect_without_success",
      ]);
      expect(
        findingsOf(report, failedRefund.taskId).find((f) => f.code === "mandatory_effect_not_succeeded")?.message,
      ).toContain("irreversible payments.refund call refund is FAILED");
      expect(codesOf(report, otherEvidence.taskId)).toEqual(["success_without_evidence"]);
      expect(findingsOf(report, otherEvidence.taskId)[0]?.message).toContain(
        "names neither this execution nor its idempotency key",
      );
      expect(codesOf(report, noteInDoubt.taskId)).toEqual(["effect_in_doubt_after_completion"]);
    });

    it("a failed task whose refund went through is found, unless a person already has it", async () => {
      const s = await sandbox();
      const failedWithRefund = async () => {
        const t = await runningTask(db);
        const intent = await recordIntent(
          db,
          t.id,
          { tool_call_id: "refund", tool: "payments.refund", request: refund, expected_version: t.version },
          agent,
        );
        if (intent.kind !== "proceed") throw new Error(intent.kind);
        await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
        const row = await getExecutionRowOrThrow(db, intent.execution.id);
        const deps = connectorsFor(s.url);
        const outcome = await performEffect(row, deps);
        if (outcome.kind !== "succeeded") throw new Error(outcome.kind);
        const moved = await recordOutcome(
          db,
          row.id,
          {
            attempt_id: row.attemptId,
            outcome: "succeeded",
            evidence: { ...outcome.evidence, record: outcome.record },
          },
          agent,
          deps,
        );
        await transitionTask(
          db,
          t.id,
          {
            expected_version: moved.task?.version ?? 0,
            to: "FAILED",
            reason: "validation failed after the refund went out",
          },
          agent,
        );
        return { taskId: t.id, executionId: row.id };
      };
      const alone = await failedWithRefund();
      const watched = await failedWithRefund();
      await db.$transaction((tx) =>
        raiseDivergence(
          tx,
          {
            taskId: watched.taskId,
            executionId: watched.executionId,
            kind: "effect_after_task_ended",
            message: "refund on a failed task",
            internal: {},
            external: {},
          },
          system,
        ),
      );

      const report = await checkConsistency(db, { provider: await fetchProviderRecords(s.url) });
      expect(codesOf(report, alone.taskId)).toEqual(["failed_with_effect"]);
      expect(codesOf(report, watched.taskId)).toEqual([]);
      expect(report.withPeople.find((p) => p.taskId === watched.taskId)?.with).toEqual([
        expect.stringMatching(/^alert .* effect_after_task_ended \(OPEN\)$/),
      ]);
    });
  });

  describe("the provider's records", () => {
    it("a refund nobody recorded, two refunds for one execution, a success the provider never saw, and a refund that differs from the request", async () => {
      const s = await sandbox();
      const stray = await post(
        `${s.url}/v1/refunds`,
        { ...refund, metadata: { task_id: "task_stray", execution_id: "exec_stray" } },
        { "Idempotency-Key": "stray-key" },
      );
      expect(stray.status).toBe(200);
      const twice = await completedRefund(db, s.url);
      // A second refund for the same execution under a fresh key: what a blind retry does.
      await post(
        `${s.url}/v1/refunds`,
        { ...refund, metadata: { task_id: twice.taskId, execution_id: twice.execution.id } },
        { "Idempotency-Key": "fresh-key-1" },
      );
      const ghost = await completedRefund(db, s.url);
      const differs = await runningTask(db);
      const intent = await recordIntent(
        db,
        differs.id,
        { tool_call_id: "refund", tool: "payments.refund", request: refund, expected_version: differs.version },
        agent,
      );
      if (intent.kind !== "proceed") throw new Error(intent.kind);
      await post(
        `${s.url}/v1/refunds`,
        { ...refund, amount_cents: 99_999, metadata: { task_id: differs.id, execution_id: intent.execution.id } },
        { "Idempotency-Key": intent.execution.idempotencyKey },
      );

      const records = await fetchProviderRecords(s.url);
      // The ghost's refund is taken out of the provider's answer: as if the provider never made it.
      const provider = {
        ...records,
        refunds: records.refunds.filter((r) => r.idempotency_key !== ghost.execution.idempotencyKey),
      };
      const report = await checkConsistency(db, { provider });
      expect(
        report.findings.filter((f) => f.code === "provider_effect_without_execution").map((f) => f.details.record),
      ).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ idempotency_key: "stray-key" }),
          expect.objectContaining({ idempotency_key: "fresh-key-1" }),
        ]),
      );
      expect(codesOf(report, "task_stray")).toEqual(["provider_effect_without_execution"]);
      expect(codesOf(report, twice.taskId)).toEqual(["duplicate_provider_effect", "provider_effect_without_execution"]);
      expect(findingsOf(report, twice.taskId).find((f) => f.code === "duplicate_provider_effect")?.message).toContain(
        `2 refunds of charge ${refund.charge_id} for execution ${twice.execution.id}`,
      );
      expect(codesOf(report, ghost.taskId)).toEqual(["success_missing_at_provider"]);
      // Not yet due for reconciliation (INTENT_RECORDED a moment ago): the difference is a finding, the pending settlement is not.
      expect(codesOf(report, differs.id)).toEqual(["provider_effect_differs"]);
      expect(findingsOf(report, differs.id)[0]?.details.mismatches).toEqual(["amount_cents"]);
      expect(report.settling.map((x) => x.executionId)).toContain(intent.execution.id);
    });
  });

  describe("deadlines", () => {
    it("a SENT refund past the reconciler's deadline, a frozen refund whose review was closed, an abandoned lease, and outbox messages nobody delivered", async () => {
      const sent = await runningTask(db);
      const sentIntent = await recordIntent(
        db,
        sent.id,
        { tool_call_id: "refund", tool: "payments.refund", request: refund, expected_version: sent.version },
        agent,
      );
      if (sentIntent.kind !== "proceed") throw new Error(sentIntent.kind);
      await markSent(db, sentIntent.execution.id, { attempt_id: sentIntent.execution.attemptId }, agent);
      // The same, but an alert on it: with people.
      const watched = await runningTask(db);
      const watchedIntent = await recordIntent(
        db,
        watched.id,
        { tool_call_id: "refund", tool: "payments.refund", request: refund, expected_version: watched.version },
        agent,
      );
      if (watchedIntent.kind !== "proceed") throw new Error(watchedIntent.kind);
      await markSent(db, watchedIntent.execution.id, { attempt_id: watchedIntent.execution.attemptId }, agent);
      await db.$transaction((tx) =>
        raiseDivergence(
          tx,
          {
            taskId: watched.id,
            executionId: watchedIntent.execution.id,
            kind: "effect_mismatch",
            message: "watched",
            internal: {},
            external: {},
          },
          system,
        ),
      );

      const frozen = await runningTask(db);
      const frozenIntent = await recordIntent(
        db,
        frozen.id,
        { tool_call_id: "refund", tool: "payments.refund", request: refund, expected_version: frozen.version },
        agent,
      );
      if (frozenIntent.kind !== "proceed") throw new Error(frozenIntent.kind);
      await markSent(db, frozenIntent.execution.id, { attempt_id: frozenIntent.execution.attemptId }, agent);
      await recordOutcome(
        db,
        frozenIntent.execution.id,
        { attempt_id: frozenIntent.execution.attemptId, outcome: "unknown", error: "timeout" },
        agent,
      );
      expect((await reconcileExecution(db, frozenIntent.execution.id, unreachable)).action).toBe("needs_human");
      await db.$executeRaw`UPDATE reviews SET status = 'REJECTED' WHERE execution_id = ${frozenIntent.execution.id}`;

      const abandoned = await runningTask(db);
      await acquireLease(db, abandoned.id, { ttl_seconds: 1 }, agent);

      const report = await checkConsistency(db, { now: hourLater(), outboxDeadlineMs: 60_000 });
      expect(codesOf(report, sent.id)).toEqual(["execution_past_deadline"]);
      expect(findingsOf(report, sent.id)[0]?.message).toMatch(
        /payments\.refund \(refund\) of task .* is SENT \d+ min past the moment the reconciler should have settled it/,
      );
      expect(codesOf(report, watched.id)).toEqual([]);
      expect(report.withPeople.find((p) => p.taskId === watched.id)?.message).toContain("is SENT");
      expect(codesOf(report, frozen.id)).toEqual(["frozen_without_review", "outbox_undelivered"]);
      expect(findingsOf(report, frozen.id).find((f) => f.code === "frozen_without_review")?.message).toMatch(
        /its review rev_\S+ is REJECTED: nobody is asked to decide/,
      );
      expect(codesOf(report, abandoned.id)).toEqual(["task_abandoned"]);
      expect(findingsOf(report, abandoned.id)[0]?.message).toContain(`since ${agent.identity}'s lease expired`);

      // Without a subscriber configured, waiting messages are the outbox doing its job.
      const quiet = await checkConsistency(db, { now: hourLater(), outboxDeadlineMs: null });
      expect(codesOf(quiet, frozen.id)).toEqual(["frozen_without_review"]);
      // And right now nothing is past a deadline yet: a live system is not accused.
      const now = await checkConsistency(db, { outboxDeadlineMs: null });
      expect(
        now.findings.filter((f) => f.check === "deadlines" && [sent.id, abandoned.id].includes(f.taskId ?? "")),
      ).toEqual([]);
    });
  });

  it("a failed task without a reason a person can read", async () => {
    const silent = await runningTask(db);
    await transitionTask(db, silent.id, { expected_version: silent.version, to: "FAILED" }, agent);
    const terse = await runningTask(db);
    await transitionTask(db, terse.id, { expected_version: terse.version, to: "FAILED", reason: "ECONNRESET" }, agent);
    const said = await runningTask(db);
    await transitionTask(
      db,
      said.id,
      { expected_version: said.version, to: "FAILED", reason: "the provider refused the refund: card expired" },
      agent,
    );

    const report = await checkConsistency(db);
    expect(codesOf(report, silent.id)).toEqual(["failed_without_reason"]);
    expect(findingsOf(report, silent.id)[0]?.message).toContain("gives no reason");
    expect(codesOf(report, terse.id)).toEqual(["failed_without_reason"]);
    expect(findingsOf(report, terse.id)[0]?.message).toContain('gives only "ECONNRESET"');
    expect(codesOf(report, said.id)).toEqual([]);
  });

  it("the human-readable report names the verdict, each check and each finding; the cap keeps counting", async () => {
    const report = await checkConsistency(db, { maxFindingsPerCode: 1 });
    const text = formatConsistencyReport(report);
    expect(text).toMatch(/^INCONSISTENT: \d+ finding\(s\)/);
    expect(text).toContain("transition_logs:");
    expect(text).toContain("[failed_without_reason]");
    expect(report.findings.filter((f) => f.code === "failed_without_reason")).toHaveLength(1);
    expect(report.checks.failure_reasons.findings).toBe(2);
    expect(text).toContain("… and 1 more");
  });
});
