import { describe, expect, it } from "vitest";
import { reconcileAlert } from "@/lib/use-cases/alerts/alert-actions";
import { alertHistory, countAlerts, listAlerts } from "@/lib/use-cases/alerts/alert-queries";
import {
  acknowledgeAlert,
  escalateAlert,
  hasOpenDivergence,
  raiseAlert,
  resolveDivergence,
  alertsActor,
} from "@/lib/use-cases/alerts/divergence";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { reconcilerActor, verifySettled } from "@/lib/use-cases/reconciliation/reconciler";
import { listTransitions } from "@/lib/use-cases/tasks/task-queries";
import {
  agent,
  alice,
  bob,
  connectorsFor,
  failure,
  lostAnswer,
  providerLosesItsRecords,
  refund,
  refundExecution,
  runningTask,
  successMadeAt,
  taskStatusOf,
} from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { sandbox } from "@/tests/sandbox/helpers";

/**
 * The people's actions on an alert, each a CAS on the alert's version with
 * its audit entry in the same transaction; a stale one refused in words and
 * recording nothing. Reconcile against the sandbox provider over real HTTP.
 */
const db = useTestDatabase();

/** The alert's history as its page and the API read it: the values its entries quote sealed, opened. */
async function auditOf(alertId: string) {
  return alertHistory(db, alertId);
}

async function openAlert(
  taskId: string,
  kind: "effect_mismatch" | "stale_write" = "effect_mismatch",
  executionId?: string,
) {
  return db.$transaction(
    async (tx) =>
      (
        await raiseAlert(
          tx,
          {
            taskId,
            executionId,
            kind,
            message: "the provider's refund is for another amount",
            internal: { amount_cents: 2500 },
            external: { amount_cents: 9900 },
          },
          reconcilerActor,
        )
      ).alert,
  );
}

describe("acknowledge", () => {
  it("is a CAS: ACKNOWLEDGED with the reason and an audit entry; the same version again is a conflict in words and writes nothing", async () => {
    const task = await runningTask(db);
    const alert = await openAlert(task.id);
    expect(await hasOpenDivergence(db, task.id)).toBe(true);

    const acked = await acknowledgeAlert(
      db,
      alert.id,
      { expectedVersion: 1, reason: "refund of 99.00 was agreed with the customer" },
      alice,
    );
    expect(acked).toMatchObject({
      status: "ACKNOWLEDGED",
      version: 2,
      resolution: "refund of 99.00 was agreed with the customer",
    });
    expect(await hasOpenDivergence(db, task.id)).toBe(false);
    const entries = await auditOf(alert.id);
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ["divergence.raised", reconcilerActor.identity],
      ["divergence.acknowledged", alice.identity],
    ]);
    expect(entries[1]?.details).toMatchObject({
      reason: "refund of 99.00 was agreed with the customer",
      status_after: "ACKNOWLEDGED",
      version_after: 2,
    });

    // Bob acts on the version he read before Alice's acknowledgement.
    const stale = await failure(acknowledgeAlert(db, alert.id, { expectedVersion: 1, reason: "me too" }, bob));
    expect(stale.code).toBe("version_conflict");
    expect(stale.details).toMatchObject({ currentVersion: 2, currentStatus: "ACKNOWLEDGED" });
    expect(await auditOf(alert.id)).toHaveLength(2);
    expect((await failure(acknowledgeAlert(db, alert.id, { expectedVersion: 2, reason: "again" }, bob))).code).toBe(
      "version_conflict",
    );
    expect((await failure(acknowledgeAlert(db, alert.id, { expectedVersion: 2, reason: "   " }, bob))).code).toBe(
      "validation_failed",
    );
    expect((await failure(acknowledgeAlert(db, "alert_missing", { expectedVersion: 1, reason: "x" }, bob))).code).toBe(
      "not_found",
    );

    // Resolving still works from ACKNOWLEDGED.
    expect(
      await resolveDivergence(
        db,
        alert.id,
        { expectedVersion: 2, resolution: "refund corrected at the provider" },
        bob,
      ),
    ).toMatchObject({ status: "RESOLVED", version: 3 });
  });
});

describe("escalate", () => {
  it("moves a RECONCILING task to WAITING_FOR_HUMAN in the same transaction, naming the person in the reason", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    await lostAnswer(s.url, execution);
    await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    expect(await taskStatusOf(db, execution.taskId)).toBe("RECONCILING");
    await runMonitorPass(
      db,
      { idempotencyWindowMs: () => 1_000 },
      { now: new Date(Date.now() + 5_000), only: ["unknown_outcomes"] },
    );
    const [alert] = await db.divergenceAlert.findMany({
      where: { executionId: execution.id, kind: "unknown_outcome_expired" },
    });
    expect(alert).toBeDefined();

    const escalated = await escalateAlert(
      db,
      alert!.id,
      { expectedVersion: 1, reason: "the provider's window has passed; finance must decide" },
      alice,
    );
    expect(escalated.alert).toMatchObject({ status: "ESCALATED", version: 2 });
    expect(escalated.task).toMatchObject({ moved: true, status: "WAITING_FOR_HUMAN" });
    expect(await taskStatusOf(db, execution.taskId)).toBe("WAITING_FOR_HUMAN");
    const last = (await listTransitions(db, execution.taskId)).at(-1);
    expect(last).toMatchObject({ toStatus: "WAITING_FOR_HUMAN", actor: alertsActor.identity });
    expect(last?.reason).toContain(`escalated by ${alice.identity}: the provider's window has passed`);
    // Escalated still blocks: people have it now, nothing irreversible proceeds meanwhile.
    expect(await hasOpenDivergence(db, execution.taskId)).toBe(true);
    const [, entry] = await auditOf(alert!.id);
    expect(entry).toMatchObject({ action: "divergence.escalated", actor: alice.identity });
    expect(entry?.details).toMatchObject({ task_moved: true, task_status: "WAITING_FOR_HUMAN" });
    expect((await failure(escalateAlert(db, alert!.id, { expectedVersion: 2, reason: "again" }, bob))).code).toBe(
      "version_conflict",
    );
  });

  it("leaves a task whose workflow has no such edge for the system where it is, and says why", async () => {
    const task = await runningTask(db);
    const alert = await openAlert(task.id, "stale_write");
    const escalated = await escalateAlert(
      db,
      alert.id,
      { expectedVersion: 1, reason: "zombie worker on this task" },
      alice,
    );
    expect(escalated.alert.status).toBe("ESCALATED");
    expect(escalated.task.moved).toBe(false);
    expect(escalated.task.note).toMatch(/stays RUNNING/);
    expect(await taskStatusOf(db, task.id)).toBe("RUNNING");
  });
});

describe("reconcile", () => {
  it("an unknown outcome the provider did apply: reconciled now, the ledger and the provider agree, RESOLVED with the provider's record as evidence", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    await lostAnswer(s.url, execution);
    await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    await runMonitorPass(
      db,
      { idempotencyWindowMs: () => 1_000 },
      { now: new Date(Date.now() + 5_000), only: ["unknown_outcomes"] },
    );
    const alert = await db.divergenceAlert.findFirstOrThrow({
      where: { executionId: execution.id, kind: "unknown_outcome_expired" },
    });

    const result = await reconcileAlert(db, alert.id, { expectedVersion: alert.version }, alice, connectorsFor(s.url));
    expect(result.reconciled).toMatchObject({ action: "reconciled_succeeded", from: "OUTCOME_UNKNOWN" });
    expect(result.finding.agreed).toBe(true);
    expect(result.alert).toMatchObject({ status: "RESOLVED", resolvedBy: alice.identity, version: 2 });
    expect(result.alert.resolution).toMatch(
      /^Reconciled: the ledger says RECONCILED_SUCCEEDED and the provider holds re_/,
    );
    const [, entry] = await auditOf(alert.id);
    expect(entry).toMatchObject({ action: "divergence.reconciled", actor: alice.identity });
    expect(entry?.details).toMatchObject({
      agreed: true,
      provider: {
        lookup: "found",
        record: { idempotency_key: execution.idempotencyKey, amount_cents: refund.amount_cents },
      },
    });
    expect(await hasOpenDivergence(db, execution.taskId)).toBe(false);
  });

  it("a success the provider has since lost: still diverged, the attempt recorded, the alert stays open and blocking", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    // The provider confirmed the refund when it was reported, then lost its record.
    const deps = connectorsFor(s.url);
    await recordOutcome(db, execution.id, await successMadeAt(deps, execution), agent, deps);
    await providerLosesItsRecords(s.url);
    const verified = await verifySettled(db, connectorsFor(s.url));
    const raised = verified.raised.find((r) => r.executionId === execution.id);
    expect(raised?.kind).toBe("effect_missing_at_provider");

    const result = await reconcileAlert(db, raised!.alertId, { expectedVersion: 1 }, alice, connectorsFor(s.url));
    expect(result.reconciled).toMatchObject({ action: "not_due" });
    expect(result.finding).toMatchObject({ agreed: false });
    expect(result.finding.summary).toContain("the provider holds nothing under key");
    expect(result.alert).toMatchObject({ status: "OPEN", version: 2 });
    expect((await auditOf(raised!.alertId)).map((e) => e.action)).toEqual([
      "divergence.raised",
      "divergence.reconciled",
    ]);
    expect(await hasOpenDivergence(db, execution.taskId)).toBe(true);
    // And a second irreversible intent on the task is refused while it is open.
    const task = await db.task.findFirstOrThrow({ where: { id: execution.taskId } });
    expect(task.status).toBe("RUNNING");
    const blocked = await failure(
      recordIntent(
        db,
        task.id,
        { tool_call_id: "refund-2", tool: "payments.refund", request: refund, expected_version: task.version },
        agent,
      ),
    );
    expect(blocked.invariants).toEqual(["no_irreversible_effect_while_diverged"]);
    // Acting on the version before the reconcile is refused.
    expect(
      (await failure(reconcileAlert(db, raised!.alertId, { expectedVersion: 1 }, bob, connectorsFor(s.url)))).code,
    ).toBe("version_conflict");
  });

  it("an alert without an execution cannot be reconciled: said in words", async () => {
    const task = await runningTask(db);
    const alert = await openAlert(task.id, "stale_write");
    const refused = await failure(
      reconcileAlert(db, alert.id, { expectedVersion: 1 }, alice, connectorsFor("http://127.0.0.1:2")),
    );
    expect(refused).toMatchObject({ code: "invariant_violated", invariants: ["reconcile_needs_execution"] });
  });
});

describe("dedupe and listing", () => {
  it("one unresolved alert per fingerprint; after it is resolved, the same problem raises a new one; the list filters and pages newest first", async () => {
    const task = await runningTask(db);
    const first = await openAlert(task.id, "stale_write");
    const again = await openAlert(task.id, "stale_write");
    expect(again.id).toBe(first.id);
    expect(again.occurrences).toBe(2);
    await resolveDivergence(db, first.id, { expectedVersion: 1, resolution: "worker restarted" }, alice);
    const fresh = await openAlert(task.id, "stale_write");
    expect(fresh.id).not.toBe(first.id);

    const page1 = await listAlerts(db, { task: task.id, limit: 1 });
    expect(page1.items.map((a) => a.id)).toEqual([fresh.id]);
    const page2 = await listAlerts(db, { task: task.id, limit: 1, cursor: page1.nextCursor! });
    expect(page2.items.map((a) => a.id)).toEqual([first.id]);
    expect(page2.nextCursor).toBeNull();
    expect((await listAlerts(db, { task: task.id, status: "RESOLVED" })).items.map((a) => a.id)).toEqual([first.id]);
    expect((await listAlerts(db, { kind: "stale_write", severity: "critical", task: task.id })).items).toHaveLength(2);
    expect((await failure(listAlerts(db, { kind: "nonsense" }))).code).toBe("validation_failed");
    // Oldest first pages the other way; the total counts what the filters select, every page together.
    const oldest = await listAlerts(db, { task: task.id, limit: 1, order: "asc" });
    expect(oldest.items.map((a) => a.id)).toEqual([first.id]);
    const next = await listAlerts(db, { task: task.id, limit: 1, order: "asc", cursor: oldest.nextCursor! });
    expect(next.items.map((a) => a.id)).toEqual([fresh.id]);
    expect(next.nextCursor).toBeNull();
    expect(await countAlerts(db, { task: task.id })).toBe(2);
    expect(await countAlerts(db, { task: task.id, status: "RESOLVED" })).toBe(1);
  });
});
