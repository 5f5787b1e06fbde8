import { describe, expect, it } from "vitest";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { loadDashboard, minuteWindow, dayWindow, type DashboardData } from "@/lib/adapters/console/dashboard/dashboard";
import { listExecutionsAcrossTasks } from "@/lib/adapters/console/executions/executions";
import { raiseDivergence } from "@/lib/use-cases/alerts/divergence";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { acquireLease, releaseLease } from "@/lib/stores/leases";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { agent, alice, failure, refundExecution, runningTask, unreachable } from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

const minute = 60_000;
const hour = 60 * minute;
const workerA: Actor = { identity: "spiffe://verity.local/agent/worker-a", kind: "agent" };
const workerB: Actor = { identity: "spiffe://verity.local/agent/worker-b", kind: "agent" };

function expectEmptySeries(d: DashboardData) {
  expect(d.transitionsPerMinute).toHaveLength(minuteWindow);
  expect(d.conflictsPerMinute).toHaveLength(minuteWindow);
  expect(d.reviews.perDay).toHaveLength(dayWindow);
  expect(d.alerts.perDay).toHaveLength(dayWindow);
}

describe("an empty database", () => {
  const db = useTestDatabase();

  it("answers zeros and full, empty series rather than failing", async () => {
    const now = new Date("2026-11-30T12:34:56.000Z");
    const d = await loadDashboard(db, now);
    expectEmptySeries(d);
    expect(d.headline).toEqual({ openAlerts: 0, unknownOutcomes: 0, reviewBacklog: 0, conflictsLastHour: 0 });
    expect(d.tasksByStatus).toEqual([]);
    expect(d.budget).toEqual([]);
    expect(d.transitionsPerMinute.every((m) => m.count === 0)).toBe(true);
    // The last bucket is the current minute, so a change made now shows at the right edge.
    expect(d.transitionsPerMinute.at(-1)?.at).toBe("2026-11-30T12:34:00.000Z");
    expect(d.transitionsPerMinute[0]?.at).toBe("2026-11-30T11:35:00.000Z");
    expect(d.reviews.perDay.at(-1)?.day).toBe("2026-11-30");
    expect(d.reviews.perDay[0]?.day).toBe("2026-11-17");
    expect(d.unknownOutcomes).toMatchObject({ count: 0, frozen: 0, oldestSince: null, oldestFrozenSince: null });
    expect(d.unknownOutcomes.buckets.map((b) => b.OUTCOME_UNKNOWN + b.NEEDS_HUMAN)).toEqual([0, 0, 0, 0]);
    expect(d.reviews).toMatchObject({
      open: 0,
      escalated: 0,
      decided: 0,
      medianDecisionMs: null,
      p90DecisionMs: null,
      oldestWaitingSince: null,
    });
    expect(d.alerts).toMatchObject({ openTotal: 0, openBySeverity: {}, severities: [] });
    expect((await listExecutionsAcrossTasks(db, {})).items).toEqual([]);
  });
});

describe("a database with work in it, made through the engine", () => {
  const db = useTestDatabase();

  it("counts each aggregate from what the engine recorded", async () => {
    // Tasks: one fresh, one running with spend recorded, one delivery task.
    const fresh = await createTask(db, { workflow: "agent-task", intent_id: "fresh" }, agent);
    const spender = await createTask(
      db,
      { workflow: "agent-task", intent_id: "spend", budget: { currency_committed_usd: 10 } },
      agent,
    );
    let v = spender.task.version;
    for (const to of ["PLANNING", "READY", "RUNNING"])
      v = (await transitionTask(db, spender.task.id, { expected_version: v, to }, agent)).task.version;
    v = (
      await transitionTask(
        db,
        spender.task.id,
        { expected_version: v, patch: { budget: { currency_spent_usd: 2.5, tokens_spent: 1200 } } },
        agent,
      )
    ).task.version;
    await createTask(db, { workflow: "delivery", intent_id: "deliver" }, agent);

    // Executions: one left OUTCOME_UNKNOWN, one frozen (NEEDS_HUMAN, review open), one frozen and then rejected.
    const unknown = await refundExecution(db);
    await recordOutcome(db, unknown.id, { attempt_id: unknown.attemptId, outcome: "unknown", error: "timeout" }, agent);
    const frozen = await refundExecution(db);
    await recordOutcome(db, frozen.id, { attempt_id: frozen.attemptId, outcome: "unknown", error: "timeout" }, agent);
    expect((await reconcileExecution(db, frozen.id, unreachable)).action).toBe("needs_human");
    const rejected = await refundExecution(db);
    await recordOutcome(
      db,
      rejected.id,
      { attempt_id: rejected.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    expect((await reconcileExecution(db, rejected.id, unreachable)).action).toBe("needs_human");
    const rejectedReview = await db.review.findUniqueOrThrow({ where: { executionId: rejected.id } });
    await decideReview(
      db,
      rejectedReview.id,
      { expected_version: 1, decision: "reject", reason: "duplicate request" },
      alice,
      unreachable,
    );

    // Stale writes: a stale version, and a worker whose lease was taken over writing with its old token.
    expect(
      (await failure(transitionTask(db, fresh.task.id, { expected_version: 7, to: "PLANNING" }, agent))).code,
    ).toBe("version_conflict");
    const leased = await runningTask(db);
    const a = await acquireLease(db, leased.id, {}, workerA);
    await releaseLease(db, leased.id, a.fencingToken, workerA);
    await acquireLease(db, leased.id, {}, workerB);
    expect(
      (
        await failure(
          transitionTask(
            db,
            leased.id,
            { expected_version: leased.version, to: "CANCELLED", fencing_token: a.fencingToken },
            workerA,
          ),
        )
      ).code,
    ).toBe("lease_conflict");

    // An alert, raised the way the reconciler raises one.
    await db.$transaction((tx) =>
      raiseDivergence(
        tx,
        {
          taskId: spender.task.id,
          kind: "effect_missing_at_provider",
          message: "no such refund",
          internal: {},
          external: {},
        },
        agent,
      ),
    );

    const now = new Date();
    const d = await loadDashboard(db, now);
    expectEmptySeries(d);

    // Tasks by state: every task once, under its status now.
    const tasks = await db.task.findMany({ select: { status: true, workflowName: true, version: true } });
    expect(d.tasksByStatus.reduce((n, s) => n + s.total, 0)).toBe(tasks.length);
    expect(tasks).toHaveLength(7);
    const byStatus = Object.fromEntries(d.tasksByStatus.map((s) => [s.status, s.byWorkflow]));
    expect(byStatus).toEqual({
      RECEIVED: { "agent-task": 1 },
      planning: { delivery: 1 },
      RUNNING: { "agent-task": 2 },
      RECONCILING: { "agent-task": 1 },
      WAITING_FOR_HUMAN: { "agent-task": 1 },
      CANCELLED: { "agent-task": 1 },
    });
    expect(d.tasksByStatus[0]?.status).toBe("RUNNING");

    // Transitions per minute: every version after the first is one change; all of them happened in this hour.
    const changes = tasks.reduce((n, t) => n + t.version - 1, 0);
    expect(d.transitionsPerMinute.reduce((n, m) => n + m.count, 0)).toBe(changes);
    expect(d.transitionsPerMinute.at(-1)!.count).toBeGreaterThan(0);
    // An hour later, they have left the window.
    const later = await loadDashboard(db, new Date(now.getTime() + 2 * hour));
    expect(later.transitionsPerMinute.reduce((n, m) => n + m.count, 0)).toBe(0);

    // Unknown outcomes and frozen executions, with their age.
    expect(d.unknownOutcomes.count).toBe(1);
    expect(d.unknownOutcomes.frozen).toBe(1);
    expect(d.unknownOutcomes.oldestSince).toBe((await getExecutionRowOrThrow(db, unknown.id)).updatedAt.toISOString());
    expect(d.unknownOutcomes.buckets.map((b) => [b.key, b.OUTCOME_UNKNOWN, b.NEEDS_HUMAN])).toEqual([
      ["lt5m", 1, 1],
      ["lt1h", 0, 0],
      ["lt1d", 0, 0],
      ["gte1d", 0, 0],
    ]);
    expect(later.unknownOutcomes.buckets.map((b) => [b.key, b.OUTCOME_UNKNOWN, b.NEEDS_HUMAN])).toEqual([
      ["lt5m", 0, 0],
      ["lt1h", 0, 0],
      ["lt1d", 1, 1],
      ["gte1d", 0, 0],
    ]);
    const dayLater = await loadDashboard(db, new Date(now.getTime() + 25 * hour));
    expect(dayLater.unknownOutcomes.buckets.find((b) => b.key === "gte1d")).toMatchObject({
      OUTCOME_UNKNOWN: 1,
      NEEDS_HUMAN: 1,
    });

    // Reviews: one waiting, one decided, and the time it took.
    const decided = await db.review.findUniqueOrThrow({ where: { id: rejectedReview.id } });
    const took = decided.decidedAt!.getTime() - decided.createdAt.getTime();
    expect(d.reviews).toMatchObject({ open: 1, escalated: 0, decided: 1, medianDecisionMs: took, p90DecisionMs: took });
    expect(d.reviews.oldestWaitingSince).toBe(
      (await db.review.findUniqueOrThrow({ where: { executionId: frozen.id } })).createdAt.toISOString(),
    );
    const today = now.toISOString().slice(0, 10);
    expect(d.reviews.perDay.find((p) => p.day === today)).toEqual({ day: today, opened: 2, decided: 1 });

    // Alerts: the raised one, open, today, by severity.
    expect(d.alerts.openBySeverity).toEqual({ critical: 1 });
    expect(d.alerts.severities).toEqual(["critical"]);
    expect(d.alerts.perDay.find((p) => p.day === today)).toEqual({ day: today, bySeverity: { critical: 1 }, total: 1 });

    // Stale-write conflicts: one of each kind, in this hour.
    const conflicts = d.conflictsPerMinute.reduce(
      (acc, m) => ({ version: acc.version + m.version, fencing: acc.fencing + m.fencing }),
      { version: 0, fencing: 0 },
    );
    expect(conflicts).toEqual({ version: 1, fencing: 1 });

    // Budget: what the task recorded as spent, per workflow.
    expect(d.budget).toEqual([
      { workflow: "agent-task", tasks: 6, usdSpent: 2.5, usdCommitted: 10, tokensSpent: 1200 },
      { workflow: "delivery", tasks: 1, usdSpent: 0, usdCommitted: 0, tokensSpent: 0 },
    ]);

    expect(d.headline).toEqual({ openAlerts: 1, unknownOutcomes: 1, reviewBacklog: 1, conflictsLastHour: 2 });
  });

  it("lists executions across tasks, filtered by status and tool, keyset-paged", async () => {
    const unknownOnly = await listExecutionsAcrossTasks(db, { status: "OUTCOME_UNKNOWN" });
    expect(unknownOnly.items.map((e) => e.status)).toEqual(["OUTCOME_UNKNOWN"]);
    expect(unknownOnly.nextCursor).toBeNull();
    expect((await listExecutionsAcrossTasks(db, { tool: "crm.add_note" })).items).toEqual([]);

    const all = await db.execution.findMany({ orderBy: [{ updatedAt: "desc" }, { id: "desc" }], select: { id: true } });
    expect(all).toHaveLength(3);
    const first = await listExecutionsAcrossTasks(db, { tool: "payments.refund" }, 2);
    expect(first.items.map((e) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    expect(first.nextCursor).not.toBeNull();
    const second = await listExecutionsAcrossTasks(db, { tool: "payments.refund", cursor: first.nextCursor! }, 2);
    expect(second.items.map((e) => e.id)).toEqual(all.slice(2).map((e) => e.id));
    expect(second.nextCursor).toBeNull();
    expect((await failure(listExecutionsAcrossTasks(db, { cursor: "not-a-cursor" }))).code).toBe("validation_failed");
  });
});
