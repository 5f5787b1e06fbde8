import { describe, expect, it } from "vitest";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import type { Principal } from "@/lib/model/permissions";
import {
  checkpointsToken,
  countTaskCheckpoints,
  idFromParam,
  loadCheckpointInspector,
  loadTaskCheckpoints,
} from "@/lib/adapters/console/checkpoints/checkpoints";
import { agent, connectorsFor, refund, successMadeAt } from "@/tests/helpers/effects";
import { sandbox } from "@/tests/sandbox/helpers";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * The checkpoint pages' loaders on a real (embedded) database: what the
 * console shows is what the engine verified, corruption included, and the
 * live token moves with every change the pages show.
 */
const engineer: Actor = { identity: "spiffe://verity.local/user/engineer", kind: "user" };

const db = useTestDatabase();

async function step(task: { id: string; version: number }, to: string) {
  const result = await transitionTask(db, task.id, { expected_version: task.version, to }, agent);
  return { id: task.id, version: result.task.version };
}

/** RUNNING at v4, a checkpoint on demand, a refund through the ledger (v5 with its checkpoint, v6 after), another checkpoint on demand. */
async function taskWithHistory() {
  const { task: created } = await createTask(
    db,
    { workflow: "agent-task", intent_id: "refund-order", budget: { currency_committed_usd: 50 } },
    agent,
  );
  let task = { id: created.id, version: created.version };
  for (const to of ["PLANNING", "READY", "RUNNING"]) task = await step(task, to);
  const early = (await createCheckpoint(db, task.id, { expected_version: task.version }, engineer)).checkpoint;
  const intent = await recordIntent(
    db,
    task.id,
    { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: task.version },
    agent,
  );
  if (intent.kind !== "proceed") throw new Error("expected proceed");
  await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
  const deps = connectorsFor((await sandbox()).url);
  const sent = await getExecutionRowOrThrow(db, intent.execution.id);
  const outcome = await recordOutcome(db, sent.id, await successMadeAt(deps, sent), agent, deps);
  task = { id: task.id, version: outcome.task!.version };
  const late = (await createCheckpoint(db, task.id, { expected_version: task.version }, engineer)).checkpoint;
  return { task, early, late, executionId: intent.execution.id };
}

/** A reader with clearance: these tests are about the pages' data, not masking (tests/db/data-classes-api.test.ts). */
const operator: Principal = {
  kind: "user",
  id: "operator",
  identity: "spiffe://verity.local/user/operator",
  role: "operator",
  displayName: "Operator",
  tenantId: "default",
};

describe("loadTaskCheckpoints", () => {
  it("lists the engine's checkpoints newest first with a verdict each, and draws them on the timeline", async () => {
    const { task, early, late, executionId } = await taskWithHistory();
    const data = await loadTaskCheckpoints(db, task.id, operator);
    expect(data).not.toBeNull();
    expect(data!.checkpoints.map((c) => [c.summary.stateVersion, c.summary.trigger, c.verdict.status])).toEqual([
      [6, "on_demand", "valid"],
      [5, "before_irreversible_effect", "valid"],
      [4, "on_demand", "valid"],
    ]);
    expect(data!.timeline.steps.map((s) => s.v)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(data!.timeline.checkpoints.map((c) => c.id)).toContain(early.id);
    // The intent was recorded while the task was at version 4 (RUNNING); the same commit moved it to 5.
    expect(data!.timeline.effects).toEqual([expect.objectContaining({ id: executionId, v: 4, status: "SUCCEEDED" })]);
    expect(data!.token).toBe(await checkpointsToken(db, task.id));
    expect(await countTaskCheckpoints(db, task.id)).toEqual({ checkpoints: 3, newestVersion: 6, restores: 0 });
    expect(late.stateVersion).toBe(6);
  });

  it("shows a checkpoint whose stored bytes were altered as corrupt, naming the failed check", async () => {
    const { task, early } = await taskWithHistory();
    // Damage at rest, below the application: one character of the stored (sealed) payload.
    await db.$executeRaw`UPDATE checkpoints SET payload = left(payload, -1) || CASE WHEN right(payload, 1) = 'A' THEN 'B' ELSE 'A' END WHERE id = ${early.id}`;
    const data = await loadTaskCheckpoints(db, task.id, operator);
    const row = data!.checkpoints.find((c) => c.summary.id === early.id)!;
    expect(row.verdict.status).toBe("corrupt");
    expect(row.verdict.reason).toMatch(/payload readable \(the payload is sealed at rest and does not open/);
    expect(data!.timeline.checkpoints.find((c) => c.id === early.id)?.integrity).toBe("corrupt");
  });

  it("is null for a task that does not exist", async () => {
    expect(await loadTaskCheckpoints(db, "no-such-task", operator)).toBeNull();
    expect(await checkpointsToken(db, "no-such-task")).toBeNull();
  });
});

describe("loadCheckpointInspector", () => {
  it("names the receipts, the restores of this checkpoint only, and the policy now; the token moves with a restore", async () => {
    const { task, early, late, executionId } = await taskWithHistory();
    const before = await checkpointsToken(db, task.id);
    const restored = await restoreCheckpoint(
      db,
      early.id,
      { expected_version: task.version, rewind: true, reason: "back to before the refund" },
      engineer,
    );
    expect(restored.task.version).toBe(7);
    expect(await checkpointsToken(db, task.id)).not.toBe(before);

    const ofLate = await loadCheckpointInspector(db, late.id, operator);
    expect(ofLate!.verdict.status).toBe("valid");
    expect(ofLate!.keyKnown).toBe(true);
    expect(ofLate!.receipts).toEqual([
      {
        id: executionId,
        execution: expect.objectContaining({ id: executionId, tool: "payments.refund", status: "SUCCEEDED" }),
      },
    ]);
    expect(ofLate!.restores).toEqual([]);
    expect(ofLate!.currentPolicyVersion).toMatch(/^policy:[0-9a-f]{16}$/);
    expect(ofLate!.detail.diffToCurrent.length).toBeGreaterThan(0);

    const ofEarly = await loadCheckpointInspector(db, early.id, operator);
    expect(ofEarly!.receipts).toEqual([]);
    expect(ofEarly!.restores.map((r) => [r.outcome, r.fromVersion, r.toVersion])).toEqual([["applied", 6, 7]]);

    const timeline = (await loadTaskCheckpoints(db, task.id, operator))!.timeline;
    expect(timeline.restores).toEqual([
      expect.objectContaining({
        checkpointId: early.id,
        from: expect.objectContaining({ v: 4 }),
        to: expect.objectContaining({ v: 7 }),
      }),
    ]);
    expect(timeline.steps.find((s) => s.v === 7)?.restored).toBe(true);
  });

  it("is null for a checkpoint that does not exist", async () => {
    expect(await loadCheckpointInspector(db, "ckpt_nope", operator)).toBeNull();
  });
});

describe("idFromParam", () => {
  it("decodes escapes and leaves a malformed one as it is", () => {
    expect(idFromParam("a%2Fb")).toBe("a/b");
    expect(idFromParam("100%")).toBe("100%");
  });
});
