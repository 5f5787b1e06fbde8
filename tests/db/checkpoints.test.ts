import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import type { Db } from "@/lib/db/client";
import { canonicalCheckpointJson } from "@/lib/model/checkpoints/checkpoint-canonical";
import { signPayload, type CheckpointKeyring } from "@/lib/model/checkpoints/checkpoint-keys";
import { rollForwardFromCheckpoint } from "@/lib/use-cases/checkpoints/roll-forward-from-checkpoint";
import { exportCheckpoint } from "@/lib/use-cases/checkpoints/export-checkpoint";
import { resumeFromNewestValidCheckpoint } from "@/lib/use-cases/checkpoints/resume-from-newest-valid-checkpoint";
import { listRestores } from "@/lib/use-cases/checkpoints/list-restores";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { planRestore } from "@/lib/use-cases/checkpoints/plan-restore";
import { verifyCheckpoint } from "@/lib/use-cases/checkpoints/verify-checkpoint";
import { getCheckpointDetail } from "@/lib/use-cases/checkpoints/get-checkpoint-detail";
import { listCheckpoints } from "@/lib/use-cases/checkpoints/list-checkpoints";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import { performEffect } from "@/lib/connectors/effects";
import { raiseDivergence } from "@/lib/use-cases/alerts/divergence";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { acquireLease, renewLease } from "@/lib/stores/leases";
import { reconcileExecution, reconcilerActor } from "@/lib/use-cases/reconciliation/reconciler";
import { seededRandom } from "@/lib/core/seeded-random";
import { openedCheckpoint, sealedForStorage } from "@/lib/stores/checkpoint-store";
import { getTaskOrThrow, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import type { TaskPatch } from "@/lib/model/tasks/task-state";
import {
  afterTimeout,
  agent,
  connectorsFor,
  failure,
  refund,
  refundsUnderKey,
  successMadeAt,
  unreachable,
} from "@/tests/helpers/effects";
import { signedV1Checkpoint } from "@/tests/helpers/checkpoints";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { sandbox } from "@/tests/sandbox/helpers";
import { openStateAfter } from "@/lib/stores/tasks/task-views";

/**
 * Checkpoints on a real (embedded) PostgreSQL: taken at the boundaries and
 * nowhere else, in the transaction of the change; restores refused or
 * applied as new versions; leases fenced; corrupt checkpoints fallen back
 * from; legacy checkpoints upgraded; a standby rolled forward.
 */
const engineer: Actor = { identity: "spiffe://verity.local/user/engineer", kind: "user" };

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await openTestPglite();
  db = t.db;
});
afterAll(async () => t.close());

const subtasks = [{ id: "issue-refund", title: "Issue the refund", mandatory: true }];

async function newTask(
  options: { subtasks?: typeof subtasks; id?: string } = {},
): Promise<{ id: string; version: number }> {
  const { task } = await createTask(
    db,
    {
      workflow: "agent-task",
      intent_id: "refund-order",
      budget: { currency_committed_usd: 50 },
      subtasks: options.subtasks,
      task_id: options.id,
    },
    agent,
  );
  return { id: task.id, version: task.version };
}

async function step(
  task: { id: string; version: number },
  to: string | undefined,
  patch?: TaskPatch,
  actor: Actor = agent,
): Promise<{ id: string; version: number }> {
  const result = await transitionTask(db, task.id, { expected_version: task.version, to, patch }, actor);
  return { id: task.id, version: result.task.version };
}

async function drive(task: { id: string; version: number }, path: string[]): Promise<{ id: string; version: number }> {
  let current = task;
  for (const to of path) current = await step(current, to);
  return current;
}

const triggers = async (taskId: string) =>
  (await listCheckpoints(db, taskId)).map((c) => [c.trigger, c.stateVersion, c.snapshotStatus]);

/** A refund (or CRM note) through the ledger, made at a sandbox provider and reported with its record. */
async function effect(
  task: { id: string; version: number },
  toolCallId: string,
  tool: "payments.refund" | "crm.add_note" = "payments.refund",
) {
  const request = tool === "payments.refund" ? refund : { customer_id: "cus_1", text: "refund issued" };
  const intent = await recordIntent(
    db,
    task.id,
    { tool_call_id: toolCallId, tool, request, expected_version: task.version },
    agent,
  );
  if (intent.kind !== "proceed" || !intent.task) throw new Error("expected proceed");
  await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
  const provider = await sandbox();
  const deps = connectorsFor(provider.url);
  const row = await getExecutionRowOrThrow(db, intent.execution.id);
  const outcome = await recordOutcome(db, row.id, await successMadeAt(deps, row), agent, deps);
  return { task: { id: task.id, version: outcome.task!.version }, execution: outcome.execution };
}

describe("automatic checkpoints", () => {
  it("are taken exactly at the semantic boundaries, in the change's own version, and verify", async () => {
    let task = await newTask();
    task = await drive(task, ["PLANNING", "READY"]);
    task = await step(task, "RUNNING", { gates: { plan_approved: true } }); // v4 gate opened
    task = await step(task, undefined, { budget: { hops_used: 1, tokens_spent: 50 } }); // v5 nothing
    task = await step(task, undefined, { artifacts: { implementation_plan: "plans/refund.md" } }); // v6 artifacts validated
    expect(
      await failure(transitionTask(db, task.id, { expected_version: task.version, to: "COMPLETED" }, agent)),
    ).toMatchObject({ code: "invariant_violated" });
    const note = await effect(task, "note-1", "crm.add_note"); // v7, v8: reversible, nothing
    const paid = await effect(note.task, "refund-1"); // v9 before the refund, v10 after
    task = await step(paid.task, "WAITING_FOR_HUMAN"); // v11 escalated
    task = await step(task, "HUMAN_RESOLVED", undefined, engineer); // v12
    task = await drive(task, ["VALIDATING", "COMPLETED"]); // v13, v14 terminal
    expect(task.version).toBe(14);
    expect(await triggers(task.id)).toEqual([
      ["gate_opened", 4, "RUNNING"],
      ["artifacts_validated", 6, "RUNNING"],
      ["before_irreversible_effect", 9, "WAITING_FOR_TOOL"],
      ["escalated", 11, "WAITING_FOR_HUMAN"],
      ["terminal", 14, "COMPLETED"],
    ]);

    const cancelled = await step(await newTask(), "CANCELLED");
    expect(await triggers(cancelled.id)).toEqual([["cancelled", 2, "CANCELLED"]]);

    const log = await db.transition.findMany({ where: { taskId: task.id }, orderBy: { toVersion: "asc" } });
    for (const c of await listCheckpoints(db, task.id)) {
      expect(c.integrity.ok, JSON.stringify(c.integrity.checks)).toBe(true);
      const detail = await getCheckpointDetail(db, c.id);
      // The snapshot is exactly the committed state of that version.
      const committed = log.find((l) => l.toVersion === c.stateVersion);
      expect(detail.document?.state_snapshot).toEqual(committed ? await openStateAfter(db, committed) : undefined);
    }
    const escalated = (await listCheckpoints(db, task.id)).find((c) => c.trigger === "escalated")!;
    const before = (await listCheckpoints(db, task.id)).find((c) => c.trigger === "before_irreversible_effect")!;
    expect((await getCheckpointDetail(db, before.id)).document?.tool_receipt_ids).toEqual([note.execution.id]);
    expect((await getCheckpointDetail(db, escalated.id)).document?.tool_receipt_ids).toEqual([
      note.execution.id,
      paid.execution.id,
    ]);
  });

  it("commit with their transition or not at all: a checkpoint that fails takes the transition down with it", async () => {
    const task = await drive(await newTask({ id: "task_ckpt_fault" }), ["PLANNING", "READY", "RUNNING"]);
    // A fault injected at the database: the checkpoint insert of this one task fails mid-transaction.
    await t.sql(
      `CREATE FUNCTION fail_checkpoint() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'injected checkpoint fault'; END $$ LANGUAGE plpgsql`,
    );
    await t.sql(
      `CREATE TRIGGER fail_checkpoint BEFORE INSERT ON checkpoints FOR EACH ROW WHEN (NEW.task_id = 'task_ckpt_fault') EXECUTE FUNCTION fail_checkpoint()`,
    );
    try {
      await expect(step(task, undefined, { gates: { plan_approved: true } })).rejects.toThrow(
        /injected checkpoint fault/,
      );
      const after = await getTaskOrThrow(db, task.id);
      expect(after.version).toBe(task.version);
      expect(after.state.gates.plan_approved).toBe(false);
      expect((await listTransitions(db, task.id)).map((l) => l.toVersion)).toEqual([1, 2, 3, 4]);
      expect(await db.checkpoint.count({ where: { taskId: task.id } })).toBe(0);
      // Off the boundary the transition is one statement and does not touch checkpoints.
      expect((await step(task, undefined, { budget: { hops_used: 1 } })).version).toBe(5);
    } finally {
      await t.sql("DROP TRIGGER fail_checkpoint ON checkpoints");
      await t.sql("DROP FUNCTION fail_checkpoint()");
    }
  });

  it("keep secrets and raw reasoning out of the snapshot, while the task keeps its own state", async () => {
    const task = await drive(await newTask(), ["PLANNING", "READY", "RUNNING"]);
    const report =
      "Refunded. Used Bearer abcdefgh12345678 and api_key=AbC123xyz987. <thinking>they might be lying</thinking>";
    await step(task, undefined, { artifacts: { review_report: report } });
    const [checkpoint] = await listCheckpoints(db, task.id);
    // The payload as signed (opened: at rest it is sealed, docs/encryption.md).
    const row = await openedCheckpoint(db, await db.checkpoint.findFirstOrThrow({ where: { id: checkpoint!.id } }));
    expect(row.payload).toContain("review_report");
    for (const secret of ["abcdefgh12345678", "AbC123xyz987", "they might be lying"])
      expect(row.payload).not.toContain(secret);
    const detail = await getCheckpointDetail(db, row.id);
    expect(detail.document?.state_snapshot.artifacts.review_report).toBe(
      "Refunded. Used [redacted] and api_key=[redacted] [redacted]",
    );
    expect(detail.document?.redactions.map((r) => r.kind).sort()).toEqual(["bearer", "credential", "reasoning"]);
    expect(detail.integrity.ok).toBe(true);
    expect((await getTaskOrThrow(db, task.id)).state.artifacts.review_report).toBe(report);
  });
});

describe("checkpoints on demand", () => {
  it("capture the committed state, once per checkpoint_id, and refuse a task that moved on", async () => {
    const task = await drive(await newTask(), ["PLANNING"]);
    const first = await createCheckpoint(
      db,
      task.id,
      { checkpoint_id: "ckpt-demand-1", expected_version: 2 },
      engineer,
    );
    expect(first).toMatchObject({
      created: true,
      checkpoint: {
        id: "ckpt-demand-1",
        trigger: "on_demand",
        stateVersion: 2,
        snapshotStatus: "PLANNING",
        createdBy: engineer.identity,
      },
    });
    expect(first.checkpoint.integrity.ok).toBe(true);
    const again = await createCheckpoint(
      db,
      task.id,
      { checkpoint_id: "ckpt-demand-1", expected_version: 2 },
      engineer,
    );
    expect(again.created).toBe(false);
    expect(await db.checkpoint.count({ where: { taskId: task.id } })).toBe(1);
    expect(
      await failure(createCheckpoint(db, task.id, { checkpoint_id: "ckpt-demand-1", expected_version: 1 }, engineer)),
    ).toMatchObject({ code: "idempotency_conflict" });
    expect(await failure(createCheckpoint(db, task.id, { expected_version: 1 }, engineer))).toMatchObject({
      code: "version_conflict",
      details: { currentVersion: 2 },
    });
    expect(await failure(createCheckpoint(db, "task_missing", {}, engineer))).toMatchObject({ code: "not_found" });
    expect(await failure(createCheckpoint(db, task.id, { bogus: 1 }, engineer))).toMatchObject({
      code: "validation_failed",
    });
  });

  it("are never of unvalidated state", async () => {
    const task = await drive(await newTask(), ["PLANNING"]);
    // Stored state broken behind the engine's back: spent above the commitment.
    await t.sql(`UPDATE tasks SET state = jsonb_set(state, '{budget,currency_spent_usd}', '99') WHERE id = $1`, [
      task.id,
    ]);
    expect(await failure(createCheckpoint(db, task.id, {}, engineer))).toMatchObject({
      code: "invariant_violated",
      invariants: ["checkpoint_of_valid_state"],
    });
    await t.sql(`UPDATE tasks SET state = state - 'gates' WHERE id = $1`, [task.id]);
    expect(await failure(createCheckpoint(db, task.id, {}, engineer))).toMatchObject({
      code: "invariant_violated",
      invariants: ["checkpoint_of_valid_state"],
    });
    expect(await db.checkpoint.count({ where: { taskId: task.id } })).toBe(0);
  });
});

describe("restoring a checkpoint", () => {
  /** RUNNING at v4 with a checkpoint, then moved on to VALIDATING at v6 with a gate and budget spent. */
  async function movedOn() {
    let task = await drive(await newTask({ subtasks }), ["PLANNING", "READY", "RUNNING"]);
    const { checkpoint } = await createCheckpoint(db, task.id, {}, engineer);
    task = await step(task, undefined, {
      budget: { currency_spent_usd: 2, tokens_spent: 500 },
      subtasks: [{ id: "issue-refund", status: "COMPLETED" }],
    });
    task = await step(task, "FAILED");
    return { task, checkpoint };
  }

  it("refuses a stale checkpoint unless the engineer rewinds, and records the refusal", async () => {
    const { task, checkpoint } = await movedOn();
    const stale = await failure(
      restoreCheckpoint(
        db,
        checkpoint.id,
        { expected_version: task.version, reason: "worker lost its place" },
        engineer,
      ),
    );
    expect(stale).toMatchObject({ code: "invariant_violated", invariants: ["stale"] });
    expect((await getTaskOrThrow(db, task.id)).version).toBe(task.version);
    const [record] = await listRestores(db, task.id);
    expect(record).toMatchObject({
      outcome: "refused",
      refusal: "stale",
      rewind: false,
      fromVersion: task.version,
      toVersion: null,
      actor: engineer.identity,
      reason: "worker lost its place",
    });
    expect(record?.plan.refusal?.code).toBe("stale");
    expect(stale.details.restoreId).toBe(record?.id);
  });

  it("applies a rewind as version n+1 with the checkpoint's state, history intact, consumed budget kept", async () => {
    const { task, checkpoint } = await movedOn();
    const historyBefore = await db.transition.findMany({ where: { taskId: task.id }, orderBy: { toVersion: "asc" } });
    const plan = await planRestore(db, checkpoint.id, { rewind: true }, engineer);
    expect(plan).toMatchObject({
      allowed: true,
      kind: "rewind",
      current: { version: 6, status: "FAILED" },
      checkpoint: { stateVersion: 4, status: "RUNNING" },
    });
    expect(plan.reauthorization.budget).toMatchObject({
      checkpoint: { currency_usd: 0, tokens: 0 },
      current: { currency_usd: 2, tokens: 500 },
      resulting: { currency_usd: 2, tokens: 500 },
    });
    expect(plan.diff.map((d) => d.path)).toEqual(
      expect.arrayContaining(["status", "subtasks[issue-refund].status", "version"]),
    );
    expect(await db.checkpointRestore.count({ where: { taskId: task.id } })).toBe(0); // the plan writes nothing

    const result = await restoreCheckpoint(
      db,
      checkpoint.id,
      { expected_version: 6, rewind: true, reason: "the failure was a flaky CRM" },
      engineer,
    );
    expect(result.task).toMatchObject({ version: 7, status: "RUNNING", updatedBy: engineer.identity });
    expect(result.task.state.subtasks[0]?.status).toBe("PENDING");
    expect(result.task.state.budget).toMatchObject({ currency_spent_usd: 2, tokens_spent: 500 });
    expect(result.transition).toMatchObject({
      fromVersion: 6,
      toVersion: 7,
      fromStatus: "FAILED",
      toStatus: "RUNNING",
      actor: engineer.identity,
      actorKind: "user",
    });
    expect(result.transition.reason).toBe(
      `restored from checkpoint ${checkpoint.id} (version 4): the failure was a flaky CRM`,
    );
    expect(result.restore).toMatchObject({
      outcome: "applied",
      toVersion: 7,
      transitionId: result.transition.id,
      refusal: null,
      rewind: true,
    });

    const historyAfter = await db.transition.findMany({ where: { taskId: task.id }, orderBy: { toVersion: "asc" } });
    expect(historyAfter.map((h) => h.toVersion)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(historyAfter.slice(0, 6)).toEqual(historyBefore);
    // Restoring the same checkpoint again is stale again (the task moved past it), never silent.
    expect(
      await failure(restoreCheckpoint(db, checkpoint.id, { expected_version: 7, reason: "again" }, engineer)),
    ).toMatchObject({ invariants: ["stale"] });
  });

  it("replays a duplicate restore, refuses a different request under the same id, and records a stale expected version", async () => {
    const { task, checkpoint } = await movedOn();
    const body = { expected_version: task.version, rewind: true, reason: "dup", restore_id: `rst-dup-${task.id}` };
    const first = await restoreCheckpoint(db, checkpoint.id, body, engineer);
    const second = await restoreCheckpoint(db, checkpoint.id, body, engineer);
    expect(second.replayed).toBe(true);
    expect(second.transition.id).toBe(first.transition.id);
    expect(second.task.version).toBe(first.task.version);
    expect(await db.checkpointRestore.count({ where: { taskId: task.id } })).toBe(1);
    expect((await listTransitions(db, task.id)).length).toBe(first.task.version);
    expect(await failure(restoreCheckpoint(db, checkpoint.id, { ...body, reason: "other" }, engineer))).toMatchObject({
      code: "idempotency_conflict",
    });

    const conflict = await failure(
      restoreCheckpoint(db, checkpoint.id, { expected_version: task.version, rewind: true, reason: "late" }, engineer),
    );
    expect(conflict).toMatchObject({ code: "version_conflict", details: { currentVersion: first.task.version } });
    expect((await listRestores(db, task.id))[0]).toMatchObject({ outcome: "refused", refusal: "version_conflict" });
  });

  it("refuses the task's own version, a terminal task, an open divergence, an unknown outcome and a frozen action", async () => {
    const here = await drive(await newTask(), ["PLANNING"]);
    const { checkpoint: current } = await createCheckpoint(db, here.id, {}, engineer);
    expect(
      await failure(restoreCheckpoint(db, current.id, { expected_version: 2, reason: "x" }, engineer)),
    ).toMatchObject({ invariants: ["current"] });

    const ended = await step(here, "CANCELLED");
    expect(
      await failure(
        restoreCheckpoint(
          db,
          current.id,
          { expected_version: ended.version, rewind: true, reason: "undo cancel" },
          engineer,
        ),
      ),
    ).toMatchObject({
      invariants: ["terminal"],
    });

    const diverged = await drive(await newTask(), ["PLANNING", "READY"]);
    const { checkpoint: early } = await createCheckpoint(db, diverged.id, {}, engineer);
    const later = await step(diverged, "RUNNING");
    await db.$transaction((tx) =>
      raiseDivergence(
        tx,
        { taskId: diverged.id, kind: "effect_missing_at_provider", message: "test", internal: {}, external: {} },
        reconcilerActor,
      ),
    );
    expect(
      await failure(
        restoreCheckpoint(db, early.id, { expected_version: later.version, rewind: true, reason: "x" }, engineer),
      ),
    ).toMatchObject({ invariants: ["diverged"] });

    let task = await drive(await newTask(), ["PLANNING", "READY", "RUNNING"]);
    const { checkpoint } = await createCheckpoint(db, task.id, {}, engineer);
    const intent = await recordIntent(
      db,
      task.id,
      { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: task.version },
      agent,
    );
    if (intent.kind !== "proceed") throw new Error("expected proceed");
    await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
    task = { id: task.id, version: (await getTaskOrThrow(db, task.id)).version };
    const unknown = await planRestore(db, checkpoint.id, { rewind: true }, engineer);
    expect(unknown).toMatchObject({ allowed: false, refusal: { code: "unreconciled" } });
    expect(unknown.effects.needsReconciliation.map((e) => e.executionId)).toEqual([intent.execution.id]);
    // The reconciler cannot reach the provider: the refund is frozen for people.
    await reconcileExecution(db, intent.execution.id, unreachable, { now: afterTimeout() });
    const frozen = await planRestore(db, checkpoint.id, { rewind: true }, engineer);
    expect(frozen).toMatchObject({ allowed: false, refusal: { code: "awaiting_human" } });
    expect(frozen.effects.needsHuman.map((e) => e.executionId)).toEqual([intent.execution.id]);
  });

  it("fences the live lease: the old holder's writes and renewals are refused, a new lease gets a greater token", async () => {
    const { task, checkpoint } = await movedOn();
    const lease = await acquireLease(db, task.id, { ttl_seconds: 600 }, agent);
    const plan = await planRestore(db, checkpoint.id, { rewind: true }, engineer);
    expect(plan.lease).toMatchObject({
      active: true,
      holder: agent.identity,
      fencingToken: lease.fencingToken,
      action: "fence",
    });
    const restored = await restoreCheckpoint(
      db,
      checkpoint.id,
      { expected_version: task.version, rewind: true, reason: "fence test" },
      engineer,
    );
    // The old holder, unaware, writes at the new version with its old token.
    const stale = await failure(
      transitionTask(
        db,
        task.id,
        {
          expected_version: restored.task.version,
          patch: { budget: { hops_used: 9 } },
          fencing_token: lease.fencingToken,
        },
        agent,
      ),
    );
    expect(stale.code).toBe("lease_conflict");
    expect(await failure(renewLease(db, task.id, lease.fencingToken, {}, agent))).toMatchObject({
      code: "lease_conflict",
    });
    const fresh = await acquireLease(db, task.id, {}, agent);
    expect(BigInt(fresh.fencingToken)).toBeGreaterThan(BigInt(lease.fencingToken));
    const resumed = await transitionTask(
      db,
      task.id,
      {
        expected_version: restored.task.version,
        patch: { budget: { hops_used: 9 } },
        fencing_token: fresh.fencingToken,
      },
      agent,
    );
    expect(resumed.task.version).toBe(restored.task.version + 1);
  });

  it("never repeats an effect: a task rewound to before its refund gets the receipt on resume, and the provider sees one refund", async () => {
    const provider = await sandbox();
    const connectors = connectorsFor(provider.url);
    /** One step of a worker: record the intent; call the provider only when told to proceed. */
    async function refundStep(
      version: number,
    ): Promise<{ kind: "called" | "receipt"; version: number; executionId: string }> {
      const intent = await recordIntent(
        db,
        task.id,
        { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: version },
        agent,
      );
      if (intent.kind === "receipt") return { kind: "receipt", version, executionId: intent.execution.id };
      const sent = await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
      const row = await getExecutionRowOrThrow(db, sent.id);
      const outcome = await performEffect(row, connectors);
      if (outcome.kind !== "succeeded") throw new Error(`provider said ${outcome.kind}`);
      const recorded = await recordOutcome(
        db,
        row.id,
        {
          attempt_id: row.attemptId,
          outcome: "succeeded",
          result: outcome.record,
          evidence: { ...outcome.evidence, record: outcome.record },
        },
        agent,
        connectors,
      );
      return { kind: "called", version: recorded.task!.version, executionId: row.id };
    }

    let task = await drive(await newTask({ subtasks }), ["PLANNING", "READY", "RUNNING"]);
    const first = await refundStep(task.version);
    expect(first.kind).toBe("called");
    task = await step({ id: task.id, version: first.version }, undefined, {
      subtasks: [{ id: "issue-refund", status: "COMPLETED" }],
    });
    const key = (await getExecutionRowOrThrow(db, first.executionId)).idempotencyKey;
    expect(await refundsUnderKey(provider.url, key)).toBe(1);

    const before = (await listCheckpoints(db, task.id)).find((c) => c.trigger === "before_irreversible_effect")!;
    const plan = await planRestore(db, before.id, { rewind: true }, engineer);
    expect(plan.allowed).toBe(true);
    expect(plan.effects.skippedByReceipt.map((e) => e.executionId)).toEqual([first.executionId]);
    const restored = await restoreCheckpoint(
      db,
      before.id,
      { expected_version: task.version, rewind: true, reason: "re-run validation" },
      engineer,
    );
    expect(restored.task.status).toBe("WAITING_FOR_TOOL");
    expect(restored.task.state.subtasks[0]?.status).toBe("PENDING");

    // The worker resumes the same step: the ledger answers with the receipt and nothing reaches the provider.
    const resumed = await refundStep(restored.task.version);
    expect(resumed).toEqual({ kind: "receipt", version: restored.task.version, executionId: first.executionId });
    expect(await refundsUnderKey(provider.url, key)).toBe(1);
    expect(await db.execution.count({ where: { taskId: task.id } })).toBe(1);
    expect((await getExecutionRowOrThrow(db, first.executionId)).attempt).toBe(1);
  });
});

describe("corrupt checkpoints", () => {
  /** Three on-demand checkpoints at versions 2, 3, 4; the task then moves to 5. */
  async function threeCheckpoints() {
    let task = await newTask();
    const ids: string[] = [];
    for (const to of ["PLANNING", "READY", "RUNNING"]) {
      task = await step(task, to);
      ids.push((await createCheckpoint(db, task.id, {}, agent)).checkpoint.id);
    }
    task = await step(task, undefined, { budget: { hops_used: 1 } });
    return { task, ids };
  }

  /**
   * The payload's content changed behind its seal (a faulty writer holding
   * the key): the envelope opens, and the signature is what catches it.
   * Edits of the sealed bytes themselves are the bit-flip test's.
   */
  const corrupt = async (id: string) => {
    const opened = await openedCheckpoint(db, await db.checkpoint.findFirstOrThrow({ where: { id } }));
    const altered = await sealedForStorage(db, {
      ...opened,
      payload: opened.payload.replace('"RUNNING"', '"RUNNINH"'),
    });
    await db.checkpoint.updateMany({ where: { id }, data: { payload: altered.payload } });
  };

  it("are detected in the database after seeded bit flips and truncations of payloads and signatures: every one", async () => {
    const { ids } = await threeCheckpoints();
    const id = ids[2]!;
    const original = await db.checkpoint.findFirstOrThrow({ where: { id } });
    const random = seededRandom(99);
    let tried = 0;
    let detected = 0;
    while (tried < 150) {
      const kind = tried % 3;
      let payload = original.payload;
      let signature = original.signature;
      if (kind === 0) {
        const bytes = Buffer.from(payload, "utf8");
        const i = Math.floor(random() * bytes.length);
        bytes[i] = bytes[i]! ^ (1 << Math.floor(random() * 8));
        payload = new TextDecoder().decode(bytes);
      } else if (kind === 1) {
        payload = payload.slice(0, Math.floor(random() * payload.length));
      } else {
        signature =
          random() < 0.5
            ? signature.slice(0, Math.floor(random() * 64))
            : signature.replace(/^./, (c) => (c === "a" ? "b" : "a"));
      }
      // PostgreSQL text cannot hold NUL; such a flip could not be stored at all.
      if (payload.includes("\u0000")) continue;
      tried++;
      await db.checkpoint.updateMany({ where: { id }, data: { payload, signature } });
      if (!(await verifyCheckpoint(db, id)).ok) detected++;
    }
    await db.checkpoint.updateMany({
      where: { id },
      data: { payload: original.payload, signature: original.signature },
    });
    expect(detected).toBe(150);
    expect((await verifyCheckpoint(db, id)).ok).toBe(true);
  });

  it("fall back to the newest earlier valid checkpoint; with none left the task ends failed, with an audit record", async () => {
    const { task, ids } = await threeCheckpoints();
    await corrupt(ids[2]!);
    const plan = await planRestore(db, ids[2]!, { rewind: true }, engineer);
    expect(plan).toMatchObject({ allowed: false, refusal: { code: "corrupt" }, fallbackCheckpointId: ids[1] });
    expect(plan.refusal?.message).toMatch(/signature FAILED/);
    const resume = await resumeFromNewestValidCheckpoint(db, task.id, agent);
    expect(resume.kind).toBe("checkpoint");
    if (resume.kind === "checkpoint") {
      expect(resume.checkpoint.id).toBe(ids[1]);
      expect(resume.skipped.map((c: CheckpointSummary) => c.id)).toEqual([ids[2]]);
    }

    await t.sql(`UPDATE checkpoints SET signature = repeat('0', 64) WHERE id = ANY($1)`, [ids.slice(0, 2)]);
    const none = await planRestore(db, ids[2]!, { rewind: true }, engineer);
    expect(none.fallbackCheckpointId).toBeNull();
    expect(none.fallbackMessage).toMatch(/No earlier checkpoint of this task verifies/);
    const ended = await resumeFromNewestValidCheckpoint(db, task.id, agent);
    expect(ended.kind).toBe("failed");
    const after = await getTaskOrThrow(db, task.id);
    expect(after.status).toBe("PERMANENTLY_FAILED");
    const log = await listTransitions(db, task.id);
    expect(log.slice(-2).map((l) => [l.toStatus, l.actor])).toEqual([
      ["FAILED", agent.identity],
      ["PERMANENTLY_FAILED", agent.identity],
    ]);
    expect(log.at(-1)?.reason).toMatch(new RegExp(`^no valid checkpoint to resume from: ${ids[2]} \\(`));
    expect((await listRestores(db, task.id))[0]).toMatchObject({
      outcome: "refused",
      refusal: "corrupt",
      checkpointId: ids[2],
    });
  });
});

describe("keys and schema versions", () => {
  const k1 = "k1-secret-0123456789abcdef0123456789abcdef";
  const k2 = "k2-secret-fedcba9876543210fedcba9876543210";

  it("rotate: old checkpoints verify with their key id, new ones use the new key, a retired key fails by name", async () => {
    const task = await drive(await newTask(), ["PLANNING"]);
    const old = await createCheckpoint(db, task.id, {}, agent, { keyring: { activeKeyId: "k1", keys: { k1 } } });
    const rotated: CheckpointKeyring = { activeKeyId: "k2", keys: { k2, k1 } };
    const fresh = await createCheckpoint(db, task.id, {}, agent, { keyring: rotated });
    expect([old.checkpoint.keyId, fresh.checkpoint.keyId]).toEqual(["k1", "k2"]);
    expect((await listCheckpoints(db, task.id, { keyring: rotated })).map((c) => c.integrity.ok)).toEqual([true, true]);
    const retired = await listCheckpoints(db, task.id, { keyring: { activeKeyId: "k2", keys: { k2 } } });
    expect(retired.map((c) => c.integrity.ok)).toEqual([false, true]);
    expect(retired[0]?.integrity.checks.find((c) => c.check === "signature")?.message).toBe(
      'key "k1" is not in this server\'s keyring (known: k2)',
    );
  });

  it("upgrade a stored v1 checkpoint on read and restore from it; refuse an unknown version by name", async () => {
    const ring: CheckpointKeyring = { activeKeyId: "k1", keys: { k1 } };
    let task = await drive(await newTask(), ["PLANNING", "READY"]);
    const state = (await getTaskOrThrow(db, task.id)).state;
    task = await step(task, "RUNNING");
    const { row: legacy, document: doc } = signedV1Checkpoint({
      state,
      checkpointId: `ckpt-v1-${task.id}`,
      createdBy: agent.identity,
      createdAt: new Date("2026-11-01T10:00:00.000Z"),
      keyring: ring,
    });
    // Written as an older release would have written it.
    await db.checkpoint.create({ data: legacy });
    const report = await verifyCheckpoint(db, legacy.id, { keyring: ring });
    expect(report).toMatchObject({
      ok: true,
      storedSchemaVersion: "oaies.checkpoint.v1",
      upgradedFrom: ["oaies.checkpoint.v1", "oaies.task-state.v1"],
    });
    const restored = await restoreCheckpoint(
      db,
      legacy.id,
      { expected_version: task.version, rewind: true, reason: "legacy" },
      engineer,
      { keyring: ring },
    );
    expect(restored.task).toMatchObject({ version: 5, status: "READY" });
    expect(restored.task.state.schema_version).toBe("oaies.task-state.v2");

    const futurePayload = canonicalCheckpointJson({
      ...doc,
      schema_version: "oaies.checkpoint.v3",
      checkpoint_id: `${doc.checkpoint_id}-v3`,
    });
    await db.checkpoint.create({
      data: {
        ...legacy,
        id: `${doc.checkpoint_id}-v3`,
        schemaVersion: "oaies.checkpoint.v3",
        payload: futurePayload,
        signature: signPayload(futurePayload, ring).signature,
      },
    });
    const unknown = await verifyCheckpoint(db, `${doc.checkpoint_id}-v3`, { keyring: ring });
    expect(unknown.ok).toBe(false);
    expect(unknown.checks.find((c) => c.check === "schema")?.message).toContain(
      'Unknown checkpoint schema_version "oaies.checkpoint.v3"',
    );
    expect(
      await planRestore(db, `${doc.checkpoint_id}-v3`, { rewind: true }, engineer, { keyring: ring }),
    ).toMatchObject({ refusal: { code: "corrupt" } });
  });
});

describe("a standby rolled forward from the primary's checkpoint", () => {
  it("imports the verified checkpoint and applies it through the same restore path", async () => {
    const standby = await openTestPglite();
    try {
      // Both databases hold the task at version 3 (the standby from a backup taken then).
      const input = {
        workflow: "agent-task",
        task_id: "task_failover_1",
        intent_id: "refund-order",
        budget: { currency_committed_usd: 50 },
      };
      for (const target of [db, standby.db]) {
        const { task } = await createTask(target, input, agent);
        let version = task.version;
        for (const to of ["PLANNING", "READY"])
          version = (await transitionTask(target, task.id, { expected_version: version, to }, agent)).task.version;
      }
      // The primary moves on and checkpoints at a boundary, then is lost.
      const primary = await step({ id: "task_failover_1", version: 3 }, "RUNNING", {
        gates: { plan_approved: true },
        budget: { tokens_spent: 700 },
      });
      const [latest] = (await listCheckpoints(db, primary.id)).slice(-1);
      const record = await exportCheckpoint(db, latest!.id);

      const tampered = { ...record, payload: record.payload.replace("700", "701") };
      expect(
        await failure(
          rollForwardFromCheckpoint(standby.db, tampered, { expected_version: 3, reason: "failover" }, engineer),
        ),
      ).toMatchObject({ code: "invariant_violated" });

      const result = await rollForwardFromCheckpoint(
        standby.db,
        record,
        { expected_version: 3, reason: "failover from primary" },
        engineer,
      );
      expect(result.plan.kind).toBe("roll_forward");
      expect(result.task).toMatchObject({ version: 4, status: "RUNNING" });
      expect(result.task.state.gates.plan_approved).toBe(true);
      expect(result.task.state.budget.tokens_spent).toBe(700);
      // Importing the same bytes again is a no-op; the restore itself is not repeated.
      expect(
        await failure(
          rollForwardFromCheckpoint(standby.db, record, { expected_version: 4, reason: "again" }, engineer),
        ),
      ).toMatchObject({ invariants: ["current"] });
    } finally {
      await standby.close();
    }
  });
});
