import { describe, expect, it } from "vitest";
import { openedAlert } from "@/lib/use-cases/alerts/divergence";
import { startBackgroundLoop } from "@/lib/jobs/background";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { acknowledgeAlert, hasOpenDivergence, resolveDivergence } from "@/lib/use-cases/alerts/divergence";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { evidenceProblem } from "@/lib/model/monitor/success-evidence";
import { type MonitorCheck } from "@/lib/use-cases/monitor/monitor-pass-context";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { acquireLease } from "@/lib/stores/leases";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import {
  agent,
  alice,
  failure,
  noteExecution,
  refundExecution,
  runningTask,
  unreachable,
} from "@/tests/helpers/effects";
import { ownerClientOf, useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * Each monitor check raised by a real scenario: the engine refuses or
 * records something, the data is edited around it, and one pass finds it.
 * Passes run only the checks under test, so each test sees its own alerts.
 */
const db = useTestDatabase();
const workerA: Actor = { identity: "spiffe://verity.local/agent/worker-a", kind: "agent" };
const workerB: Actor = { identity: "spiffe://verity.local/agent/worker-b", kind: "agent" };
const engineer: Actor = { identity: "user:engineer", kind: "user" };
const operator: Actor = { identity: "user:operator", kind: "user" };

const pass = (
  only: MonitorCheck[],
  extra: Parameters<typeof runMonitorPass>[2] = {},
  deps: Parameters<typeof runMonitorPass>[1] = {},
) => runMonitorPass(db, deps, { only, ...extra });

async function alertsOf(taskId: string, kind?: string) {
  const alerts = await db.divergenceAlert.findMany({
    where: { taskId, ...(kind ? { kind } : {}) },
    orderBy: { createdAt: "asc" },
  });
  return Promise.all(alerts.map((a) => openedAlert(db, a)));
}

async function auditActionsOf(alertId: string): Promise<string[]> {
  return (
    await db.auditEntry.findMany({ where: { stream: `divergence_alert:${alertId}` }, orderBy: { seq: "asc" } })
  ).map((e) => e.action);
}

describe("stale writes (write_conflicts)", () => {
  it("a zombie worker writing with the fencing token of a lease it lost: refused, and one critical stale_write alert however often it retries", async () => {
    const { task } = await createTask(db, { workflow: "agent-task", intent_id: "zombie" }, workerA);
    const a = await acquireLease(db, task.id, { ttl_seconds: 60 }, workerA);
    // A pauses past its lease (a GC pause, a frozen VM): its lease ends, as the clock would end it.
    await db.$executeRaw`UPDATE leases SET expires_at = now() - interval '1 second' WHERE task_id = ${task.id}`;
    const b = await acquireLease(db, task.id, {}, workerB);
    await transitionTask(db, task.id, { expected_version: 1, to: "PLANNING", fencing_token: b.fencingToken }, workerB);
    // A wakes up and writes with its old token, at the version it last saw and at the current one.
    expect(
      (
        await failure(
          transitionTask(db, task.id, { expected_version: 2, to: "CANCELLED", fencing_token: a.fencingToken }, workerA),
        )
      ).code,
    ).toBe("lease_conflict");

    const first = await pass(["write_conflicts"]);
    expect(first.checks.write_conflicts).toMatchObject({ examined: 1, violations: 1, raised: 1 });
    const [alert] = await alertsOf(task.id, "stale_write");
    expect(alert).toMatchObject({
      severity: "critical",
      status: "OPEN",
      source: "monitor",
      occurrences: 1,
      fingerprint: `stale_write:fencing:${task.id}:${workerA.identity}`,
    });
    expect(alert?.message).toContain(`fencing token ${a.fencingToken}`);
    expect(alert?.external).toMatchObject({
      kind: "fencing",
      current_lease: { holder: workerB.identity, fencing_token: b.fencingToken },
    });
    expect(await auditActionsOf(alert!.id)).toEqual(["divergence.raised"]);

    // The append-only source is read once: a second pass does not count the same refusal again…
    expect((await pass(["write_conflicts"])).checks.write_conflicts).toMatchObject({ examined: 0, violations: 0 });
    // …but a new refusal by the same zombie is the same problem seen again: one alert, two occurrences.
    expect(
      (
        await failure(
          transitionTask(
            db,
            task.id,
            { expected_version: 2, patch: { gates: { plan_approved: true } }, fencing_token: a.fencingToken },
            workerA,
          ),
        )
      ).code,
    ).toBe("lease_conflict");
    expect((await pass(["write_conflicts"])).checks.write_conflicts).toMatchObject({
      examined: 1,
      raised: 0,
      counted: 1,
    });
    const alerts = await alertsOf(task.id, "stale_write");
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ occurrences: 2, version: 1 });
    // A stale write does not block irreversible work: the refusal already held.
    expect(await hasOpenDivergence(db, task.id)).toBe(false);
  });

  it("a version refusal is contention unless the writer's view had stopped being true: no alert for a same-status race, an alert when the task had ended or moved", async () => {
    const task = await runningTask(db);
    // Two agents read version n (RUNNING); one updates in place, the other's write is refused: normal contention.
    await transitionTask(
      db,
      task.id,
      { expected_version: task.version, patch: { gates: { plan_approved: true } } },
      agent,
    );
    expect(
      (
        await failure(
          transitionTask(db, task.id, { expected_version: task.version, patch: { budget: { hops_used: 1 } } }, workerA),
        )
      ).code,
    ).toBe("version_conflict");
    expect((await pass(["write_conflicts"])).checks.write_conflicts).toMatchObject({ examined: 1, violations: 0 });
    expect(await alertsOf(task.id)).toHaveLength(0);

    // The spec's worker A: it read RUNNING, an operator cancelled the task meanwhile, A writes RUNNING-era work.
    const seen = task.version + 1;
    await transitionTask(
      db,
      task.id,
      { expected_version: seen, to: "CANCELLED", reason: "customer withdrew" },
      operator,
    );
    expect(
      (await failure(transitionTask(db, task.id, { expected_version: seen, to: "WAITING_FOR_HUMAN" }, workerA))).code,
    ).toBe("version_conflict");
    expect((await pass(["write_conflicts"])).checks.write_conflicts).toMatchObject({
      examined: 1,
      violations: 1,
      raised: 1,
    });
    const [ended] = await alertsOf(task.id, "stale_write");
    expect(ended).toMatchObject({
      severity: "critical",
      fingerprint: `stale_write:version:${task.id}:${workerA.identity}`,
    });
    expect(ended?.message).toContain("had already ended CANCELLED");
    expect(ended?.internal).toMatchObject({ status_seen: "RUNNING", expected_version: seen });

    // Moved to another status (not ended): high.
    const other = await runningTask(db);
    await transitionTask(
      db,
      other.id,
      { expected_version: other.version, to: "WAITING_FOR_HUMAN", reason: "unsure" },
      agent,
    );
    expect(
      (
        await failure(
          transitionTask(
            db,
            other.id,
            { expected_version: other.version, patch: { budget: { hops_used: 2 } } },
            workerB,
          ),
        )
      ).code,
    ).toBe("version_conflict");
    await pass(["write_conflicts"]);
    const [moved] = await alertsOf(other.id, "stale_write");
    expect(moved).toMatchObject({ severity: "high" });
    expect(moved?.message).toContain("moved from RUNNING to WAITING_FOR_HUMAN");
  });
});

describe("stale checkpoint restores", () => {
  it("a restore of an old checkpoint over newer state, refused through restoreCheckpoint, raises stale_restore_attempt; trying again counts on the same alert", async () => {
    const { task } = await createTask(db, { workflow: "agent-task", intent_id: "restore-me" }, agent);
    const { checkpoint } = await createCheckpoint(db, task.id, { expected_version: 1 }, engineer);
    const v2 = await transitionTask(db, task.id, { expected_version: 1, to: "PLANNING" }, agent);
    const refused = await failure(
      restoreCheckpoint(
        db,
        checkpoint.id,
        { expected_version: v2.task.version, reason: "worker lost its place" },
        engineer,
      ),
    );
    expect(refused.invariants).toEqual(["stale"]);

    const result = await pass(["checkpoint_restores"]);
    expect(result.checks.checkpoint_restores).toMatchObject({ examined: 1, violations: 1, raised: 1 });
    const [alert] = await alertsOf(task.id, "stale_restore_attempt");
    expect(alert).toMatchObject({ severity: "critical", status: "OPEN", occurrences: 1 });
    expect(alert?.message).toContain(`restore checkpoint ${checkpoint.id}`);
    expect(alert?.external).toMatchObject({ refusal: "stale", task_at: { version: 2, status: "PLANNING" } });

    // A plan made at a version the task has left is the same kind of attempt: another refusal code, another alert.
    expect(
      (
        await failure(
          restoreCheckpoint(db, checkpoint.id, { expected_version: 1, rewind: true, reason: "old plan" }, engineer),
        )
      ).code,
    ).toBe("version_conflict");
    expect(
      (await failure(restoreCheckpoint(db, checkpoint.id, { expected_version: 2, reason: "again" }, engineer)))
        .invariants,
    ).toEqual(["stale"]);
    expect((await pass(["checkpoint_restores"])).checks.checkpoint_restores).toMatchObject({
      examined: 2,
      raised: 1,
      counted: 1,
    });
    const alerts = await alertsOf(task.id, "stale_restore_attempt");
    expect(alerts.map((a) => [a.occurrences, (a.external as { refusal: string }).refusal])).toEqual([
      [2, "stale"],
      [1, "version_conflict"],
    ]);
  });
});

describe("unknown outcomes past the provider's idempotency window", () => {
  it("an OUTCOME_UNKNOWN refund older than the window is a critical, blocking alert; acknowledging it with a reason lifts the block", async () => {
    const execution = await refundExecution(db);
    await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    const window = { idempotencyWindowMs: () => 60_000 };
    // Inside the window: nothing to say yet.
    expect((await pass(["unknown_outcomes"], {}, window)).checks.unknown_outcomes).toMatchObject({ violations: 0 });
    const later = new Date(Date.now() + 61_000);
    expect((await pass(["unknown_outcomes"], { now: later }, window)).checks.unknown_outcomes).toMatchObject({
      examined: 1,
      violations: 1,
      raised: 1,
    });
    const [alert] = await alertsOf(execution.taskId, "unknown_outcome_expired");
    expect(alert).toMatchObject({ severity: "critical", executionId: execution.id, status: "OPEN" });
    expect(alert?.message).toContain("past the provider's 1 min idempotency window");
    expect(await hasOpenDivergence(db, execution.taskId)).toBe(true);

    // Seen again next pass: counted, still one alert.
    await pass(["unknown_outcomes"], { now: later }, window);
    expect((await alertsOf(execution.taskId, "unknown_outcome_expired")).map((a) => a.occurrences)).toEqual([2]);

    await acknowledgeAlert(
      db,
      alert!.id,
      { expectedVersion: 1, reason: "provider confirmed by phone it never ran; closing the refund by hand" },
      alice,
    );
    expect(await hasOpenDivergence(db, execution.taskId)).toBe(false);
    // Acknowledged stays the one alert: a later sighting counts on it, it does not open another.
    await pass(["unknown_outcomes"], { now: later }, window);
    expect(await alertsOf(execution.taskId, "unknown_outcome_expired")).toMatchObject([
      { status: "ACKNOWLEDGED", occurrences: 3 },
    ]);
  });
});

describe("task rows edited outside Verity", () => {
  it("COMPLETED with a pending mandatory subtask, and a state that breaks an invariant: each raised once, counted on later passes, resolved for good", async () => {
    const subtasks = [{ id: "refund", title: "Issue the refund", mandatory: true }];
    const completed = (await createTask(db, { workflow: "agent-task", intent_id: "sql-complete", subtasks }, agent))
      .task;
    const overspent = (await createTask(db, { workflow: "agent-task", intent_id: "sql-budget" }, agent)).task;
    // A superuser's SQL, around every rule of the engine.
    await db.$executeRaw`UPDATE tasks SET status = 'COMPLETED', state = jsonb_set(state, '{status}', '"COMPLETED"') WHERE id = ${completed.id}`;
    await db.$executeRaw`UPDATE tasks SET state = jsonb_set(state, '{budget,currency_spent_usd}', '5') WHERE id = ${overspent.id}`;

    const first = await pass(["task_states"]);
    expect(first.checks.task_states?.error).toBeUndefined();
    const [incomplete] = await alertsOf(completed.id);
    expect(incomplete).toMatchObject({
      kind: "completed_with_open_mandatory_subtask",
      severity: "high",
      status: "OPEN",
    });
    expect(incomplete?.external).toMatchObject({ open_mandatory_subtasks: [{ id: "refund", status: "PENDING" }] });
    const [broken] = await alertsOf(overspent.id);
    expect(broken).toMatchObject({ kind: "state_invariant_broken", severity: "high" });
    expect(broken?.message).toContain("exceeds the committed");

    await pass(["task_states"]);
    expect((await alertsOf(completed.id)).map((a) => a.occurrences)).toEqual([2]);
    await resolveDivergence(
      db,
      broken!.id,
      { expectedVersion: 1, resolution: "budget corrected with finance; the row is kept as evidence" },
      alice,
    );
    await pass(["task_states"]);
    // Resolved for this version of the row: the same data does not raise it again.
    expect(await alertsOf(overspent.id)).toMatchObject([{ status: "RESOLVED", occurrences: 2 }]);
  });

  it("a state that does not parse as TaskState v2, and columns that disagree with the document", async () => {
    const task = (await createTask(db, { workflow: "agent-task", intent_id: "sql-garbage" }, agent)).task;
    await db.$executeRaw`UPDATE tasks SET state = jsonb_set(state, '{gates,bogus}', 'true'), version = 7 WHERE id = ${task.id}`;
    await pass(["task_states"]);
    const [alert] = await alertsOf(task.id);
    expect(alert).toMatchObject({
      kind: "state_invariant_broken",
      fingerprint: `state_invariant_broken:${task.id}:v7`,
    });
    expect(JSON.stringify(alert?.external)).toContain("task_state_schema");
  });
});

describe("tool success without matching evidence", () => {
  it("a success whose evidence names our key and another execution, and one whose evidence is missing", async () => {
    // Notes: a reversible effect's success stands on the worker's evidence (a refund's is confirmed at the provider).
    const named = await noteExecution(db);
    // The engine's own check accepts evidence that names our key among others.
    await recordOutcome(
      db,
      named.id,
      {
        attempt_id: named.attemptId,
        outcome: "succeeded",
        evidence: { idempotency_key: named.idempotencyKey, metadata: { execution_id: "exec_someone_else" } },
      },
      agent,
    );
    const missing = await noteExecution(db);
    // Proof sent as `result` only: accepted, but nothing is stored as evidence.
    await recordOutcome(
      db,
      missing.id,
      { attempt_id: missing.attemptId, outcome: "succeeded", result: { idempotency_key: missing.idempotencyKey } },
      agent,
    );

    await pass(["success_evidence"]);
    const [other] = await alertsOf(named.taskId, "success_without_evidence");
    expect(other).toMatchObject({ severity: "critical", executionId: named.id });
    expect(other?.message).toContain("names another effect (execution exec_someone_else)");
    const [none] = await alertsOf(missing.taskId, "success_without_evidence");
    expect(none?.message).toContain("evidence is missing");
    expect(await hasOpenDivergence(db, missing.taskId)).toBe(true);
  });

  it("evidenceProblem: ours only is fine; another key, another id or neither is not", () => {
    const ex = { id: "exec_1", idempotencyKey: "vrt:t:1" };
    expect(
      evidenceProblem(
        {
          source: "lookup",
          idempotency_key: "vrt:t:1",
          record: { idempotency_key: "vrt:t:1", metadata: { execution_id: "exec_1" } },
        },
        ex,
      ),
    ).toBeNull();
    expect(evidenceProblem({ record: { idempotency_key: "vrt:t:2" }, idempotency_key: "vrt:t:1" }, ex)).toContain(
      "key vrt:t:2",
    );
    expect(evidenceProblem({ provider: "sandbox" }, ex)).toContain("names neither");
    expect(evidenceProblem(null, ex)).toBe("is missing");
  });
});

describe("audit chain", () => {
  it("an audit row edited in place (as superuser, its guard disabled) is an audit_chain_break on the task it belongs to", async () => {
    const task = await runningTask(db);
    const entries = await db.auditEntry.findMany({ where: { stream: `task:${task.id}` }, orderBy: { seq: "asc" } });
    expect(entries.length).toBeGreaterThan(2);
    // Only the table's owner may disable its trigger.
    const owner = ownerClientOf(db);
    await owner.$executeRawUnsafe("ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only");
    try {
      await owner.$executeRaw`UPDATE audit_entries SET details = '{"to_version": 99}' WHERE id = ${entries[1]!.id}`;
    } finally {
      await owner.$executeRawUnsafe("ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only");
    }
    const result = await pass(["audit_chains"], { auditStreamsPerPass: 10_000 });
    expect(result.checks.audit_chains?.violations).toBe(1);
    const [alert] = await alertsOf(task.id, "audit_chain_break");
    expect(alert).toMatchObject({
      severity: "critical",
      fingerprint: `audit_chain_break:task:${task.id}:2:entry_edited`,
    });
    expect(alert?.message).toContain(`Entry ${entries[1]!.id} (seq 2) was changed after it was written`);
  });
});

describe("the pass itself", () => {
  it("records a run row with the checks, counts and cursor; a pass while another is running does nothing", async () => {
    const result = await pass(["task_states", "write_conflicts"]);
    expect(result.run).toMatchObject({ violations: result.violations, error: null });
    expect(result.run?.finishedAt).not.toBeNull();
    expect(Object.keys(result.run?.checks as object)).toEqual(["task_states", "write_conflicts"]);
    expect(result.run?.cursor).toMatchObject({ write_conflicts: { xid: expect.stringMatching(/^[0-9]+$/) } });

    await db.invariantMonitorRun.create({
      data: { id: "mon_other_process", startedAt: new Date(), checks: {}, cursor: {} },
    });
    expect((await pass(["task_states"])).run).toBeNull();
    await db.invariantMonitorRun.update({
      where: { id: "mon_other_process" },
      data: { finishedAt: new Date(), cursor: result.run!.cursor as object },
    });
    expect((await pass(["task_states"])).run).not.toBeNull();
  });
});

describe("in the server's background loop", () => {
  const own = useTestDatabase();
  it("a tick makes a monitor pass when one is due, and not again within the interval", async () => {
    const { task } = await createTask(own, { workflow: "agent-task", intent_id: "loop" }, agent);
    await own.$executeRaw`UPDATE tasks SET state = jsonb_set(state, '{budget,currency_spent_usd}', '5') WHERE id = ${task.id}`;
    const loop = startBackgroundLoop(own, unreachable, 3_600_000, {
      monitorIntervalMs: 3_600_000,
      log: () => undefined,
    });
    try {
      const first = await loop.runOnce();
      expect(first.monitorViolations).toBe(1);
      expect(first.alertsRaised).toBe(1);
      expect(await own.invariantMonitorRun.count()).toBe(1);
      const second = await loop.runOnce();
      expect(second.monitorViolations ?? 0).toBe(0);
      expect(await own.invariantMonitorRun.count()).toBe(1);
    } finally {
      await loop.stop();
    }
    expect(
      await Promise.all(
        (await own.divergenceAlert.findMany({ where: { taskId: task.id } })).map((a) => openedAlert(own, a)),
      ),
    ).toMatchObject([{ kind: "state_invariant_broken", source: "monitor" }]);
  });
});
