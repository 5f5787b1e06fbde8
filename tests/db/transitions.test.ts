import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@/lib/core/errors";
import { getTask, getTaskOrThrow, getTaskVersion, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { type TransitionResult } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * createTask and transitionTask against a real (PGlite) database. Every
 * assertion about what was or was not written reads the tables back with raw
 * SQL, not through the functions under test.
 */
const agent: Actor = { identity: "spiffe://verity.test/agent/coder", kind: "agent" };
const user: Actor = { identity: "user:alice", kind: "user" };

let t: TestDatabase;
beforeAll(async () => {
  t = await openTestPglite();
});
afterAll(async () => {
  await t?.close();
});

let seq = 0;
const uniqueId = (prefix: string) => `${prefix}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

interface TaskRow {
  version: number;
  status: string;
  state: { version: number; status: string; budget: { hops_used: number }; gates: Record<string, boolean> };
  updated_by: string;
}
interface TransitionRow {
  id: string;
  from_version: number | null;
  to_version: number;
  from_status: string | null;
  to_status: string;
  actor: string;
  actor_kind: string;
  state_after: { version: number; status: string };
}

async function taskRow(id: string): Promise<TaskRow | undefined> {
  return (await t.sql<TaskRow>("SELECT version, status, state, updated_by FROM tasks WHERE id = $1", [id]))[0];
}
async function transitionRows(taskId: string): Promise<TransitionRow[]> {
  return t.sql<TransitionRow>(
    "SELECT id, from_version, to_version, from_status, to_status, actor, actor_kind::text, state_after FROM transitions WHERE task_id = $1 ORDER BY to_version",
    [taskId],
  );
}

async function expectAppError(promise: Promise<unknown>, code: AppError["code"]): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected AppError ${code}`).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
  return error as AppError;
}

async function newAgentTask(extra: Record<string, unknown> = {}) {
  const { task } = await createTask(t.db, { workflow: "agent-task", intent_id: "intent-1", ...extra }, agent);
  return task;
}

/** Moves an agent-task through `path` with in-order expected versions. */
async function walk(taskId: string, path: string[], actor: Actor = agent): Promise<TransitionResult> {
  let result: TransitionResult | undefined;
  for (const to of path) {
    const version = (await taskRow(taskId))!.version;
    result = await transitionTask(t.db, taskId, { expected_version: version, to }, actor);
  }
  return result!;
}

describe("createTask", () => {
  it("writes the task at version 1 in the workflow's initial status, with its creation in the log", async () => {
    const { task, created } = await createTask(
      t.db,
      { workflow: "delivery", intent_id: "intent-a", budget: { currency_committed_usd: 12.5 } },
      user,
    );
    expect(created).toBe(true);
    expect(task.id).toMatch(/^task_/);
    const row = await taskRow(task.id);
    expect(row).toMatchObject({ version: 1, status: "planning", updated_by: "user:alice" });
    expect(row?.state).toMatchObject({ version: 1, status: "planning", budget: { hops_used: 0 } });
    expect(await transitionRows(task.id)).toEqual([
      expect.objectContaining({
        from_version: null,
        to_version: 1,
        from_status: null,
        to_status: "planning",
        actor: "user:alice",
        actor_kind: "user",
      }),
    ]);
    expect(task.state).toEqual(row?.state);
  });

  it("is idempotent on task_id: the same request again returns the task, created: false, and writes nothing", async () => {
    const taskId = uniqueId("order");
    const input = {
      workflow: "agent-task",
      task_id: taskId,
      intent_id: "intent-1",
      subtasks: [{ id: "refund", title: "Refund", mandatory: true }],
    };
    const first = await createTask(t.db, input, agent);
    const again = await createTask(t.db, structuredClone(input), agent);
    expect(first.created).toBe(true);
    expect(again.created).toBe(false);
    expect(again.task).toEqual(first.task);
    expect(await t.sql("SELECT id FROM tasks WHERE id = $1", [taskId])).toHaveLength(1);
    expect(await transitionRows(taskId)).toHaveLength(1);
  });

  it("answers a concurrent duplicate create with the one task", async () => {
    const taskId = uniqueId("dup");
    const input = { workflow: "agent-task", task_id: taskId, intent_id: "intent-1" };
    const results = await Promise.all([
      createTask(t.db, input, agent),
      createTask(t.db, input, agent),
      createTask(t.db, input, agent),
    ]);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await transitionRows(taskId)).toHaveLength(1);
  });

  it("refuses the same task_id with different parameters (idempotency_conflict) and leaves the first task alone", async () => {
    const taskId = uniqueId("order");
    await createTask(t.db, { workflow: "agent-task", task_id: taskId, intent_id: "intent-1" }, agent);
    const before = await taskRow(taskId);
    await expectAppError(
      createTask(t.db, { workflow: "agent-task", task_id: taskId, intent_id: "intent-2" }, agent),
      "idempotency_conflict",
    );
    await expectAppError(
      createTask(t.db, { workflow: "delivery", task_id: taskId, intent_id: "intent-1" }, agent),
      "idempotency_conflict",
    );
    expect(await taskRow(taskId)).toEqual(before);
    expect(await transitionRows(taskId)).toHaveLength(1);
  });

  it("refuses unknown workflows, unknown fields and invalid initial states without writing", async () => {
    const count = async () => Number((await t.sql<{ n: string }>("SELECT count(*) AS n FROM tasks"))[0]?.n);
    const before = await count();
    await expectAppError(createTask(t.db, { workflow: "nope", intent_id: "i" }, agent), "validation_failed");
    const unknown = await expectAppError(
      createTask(t.db, { workflow: "agent-task", intent_id: "i", priority: "high" }, agent),
      "validation_failed",
    );
    expect(unknown.details.errors).toEqual([{ field: "priority", message: expect.stringContaining("unknown field") }]);
    const dup = await expectAppError(
      createTask(
        t.db,
        {
          workflow: "agent-task",
          intent_id: "i",
          subtasks: [
            { id: "a", title: "A", mandatory: true },
            { id: "a", title: "B", mandatory: false },
          ],
        },
        agent,
      ),
      "invariant_violated",
    );
    expect(dup.details.violations?.map((v) => v.invariant)).toEqual(["subtask_ids_unique"]);
    expect(await count()).toBe(before);
  });
});

describe("transitionTask", () => {
  it("moves the task, bumps the version by one and logs the change in the same transaction", async () => {
    const task = await newAgentTask();
    const result = await transitionTask(
      t.db,
      task.id,
      { expected_version: 1, to: "PLANNING", reason: "start", patch: { budget: { hops_used: 1 } } },
      agent,
    );
    expect(result.replayed).toBe(false);
    expect(result.task).toMatchObject({ version: 2, status: "PLANNING" });
    const row = await taskRow(task.id);
    expect(row).toMatchObject({
      version: 2,
      status: "PLANNING",
      state: { version: 2, status: "PLANNING", budget: { hops_used: 1 } },
    });
    expect(result.task.state).toEqual(row?.state);
    const log = await transitionRows(task.id);
    expect(log.map((r) => [r.from_version, r.to_version, r.from_status, r.to_status])).toEqual([
      [null, 1, null, "RECEIVED"],
      [1, 2, "RECEIVED", "PLANNING"],
    ]);
    expect(log[1]?.id).toBe(result.transition.id);
    expect(log[1]?.state_after).toEqual(row?.state);
  });

  it("refuses a stale write with version_conflict carrying the current version, and changes nothing", async () => {
    const task = await newAgentTask();
    await walk(task.id, ["PLANNING", "READY"]);
    const before = await taskRow(task.id);
    const logBefore = await transitionRows(task.id);
    const error = await expectAppError(
      transitionTask(t.db, task.id, { expected_version: 2, to: "RUNNING" }, agent),
      "version_conflict",
    );
    expect(error.details.currentVersion).toBe(3);
    expect(error.details.currentStatus).toBe("READY");
    expect(error.status).toBe(409);
    expect(await taskRow(task.id)).toEqual(before);
    expect(await transitionRows(task.id)).toEqual(logBefore);
    // A version from the future is just as stale.
    await expectAppError(
      transitionTask(t.db, task.id, { expected_version: 9, to: "RUNNING" }, agent),
      "version_conflict",
    );
    expect(await taskRow(task.id)).toEqual(before);
  });

  it("lets exactly one of two writers at the same version win", async () => {
    const task = await newAgentTask();
    const results = await Promise.allSettled([
      transitionTask(t.db, task.id, { expected_version: 1, to: "PLANNING" }, agent),
      transitionTask(t.db, task.id, { expected_version: 1, to: "CANCELLED" }, agent),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const rejected = results.find((r) => r.status === "rejected");
    expect((rejected?.reason as AppError).code).toBe("version_conflict");
    expect((await taskRow(task.id))?.version).toBe(2);
    expect(await transitionRows(task.id)).toHaveLength(2);
  });

  it("answers a retry with the same transition_id with the first result (replayed) and writes no new row", async () => {
    // Created by a person, moved by an agent: the replay must not mix up who created the task.
    const { task } = await createTask(t.db, { workflow: "agent-task", intent_id: "intent-1" }, user);
    const input = {
      expected_version: 1,
      to: "PLANNING",
      transition_id: uniqueId("tr"),
      patch: { artifacts: { implementation_plan: "plan" } },
    };
    const first = await transitionTask(t.db, task.id, input, agent);
    const rowAfterFirst = await taskRow(task.id);
    const retry = await transitionTask(t.db, task.id, structuredClone(input), agent);
    expect(first.replayed).toBe(false);
    expect(retry.replayed).toBe(true);
    expect(retry.transition).toEqual(first.transition);
    expect(retry.task).toEqual(first.task);
    expect(await taskRow(task.id)).toEqual(rowAfterFirst);
    expect(await transitionRows(task.id)).toHaveLength(2);
  });

  it("still replays after the task has moved on", async () => {
    const task = await newAgentTask();
    const input = { expected_version: 1, to: "PLANNING", transition_id: uniqueId("tr") };
    const first = await transitionTask(t.db, task.id, input, agent);
    await walk(task.id, ["READY", "RUNNING"]);
    const retry = await transitionTask(t.db, task.id, input, agent);
    expect(retry).toMatchObject({ replayed: true, task: { version: 2, status: "PLANNING" } });
    expect(retry.task).toEqual(first.task);
    expect((await taskRow(task.id))?.version).toBe(4);
    expect(await transitionRows(task.id)).toHaveLength(4);
  });

  it("refuses a transition_id reused for a different body, even at the current version (idempotency_conflict)", async () => {
    const task = await newAgentTask();
    const transitionId = uniqueId("tr");
    await transitionTask(t.db, task.id, { expected_version: 1, to: "PLANNING", transition_id: transitionId }, agent);
    const before = await taskRow(task.id);
    // Stale version and a different target.
    await expectAppError(
      transitionTask(t.db, task.id, { expected_version: 1, to: "CANCELLED", transition_id: transitionId }, agent),
      "idempotency_conflict",
    );
    // Current version: the CAS would succeed, the duplicate id must undo it.
    await expectAppError(
      transitionTask(t.db, task.id, { expected_version: 2, to: "READY", transition_id: transitionId }, agent),
      "idempotency_conflict",
    );
    // Same target, different reason.
    await expectAppError(
      transitionTask(
        t.db,
        task.id,
        { expected_version: 1, to: "PLANNING", reason: "again", transition_id: transitionId },
        agent,
      ),
      "idempotency_conflict",
    );
    expect(await taskRow(task.id)).toEqual(before);
    expect(await transitionRows(task.id)).toHaveLength(2);
  });

  it("refuses a transition_id already used on another task", async () => {
    const a = await newAgentTask();
    const b = await newAgentTask();
    const transitionId = uniqueId("tr");
    await transitionTask(t.db, a.id, { expected_version: 1, to: "PLANNING", transition_id: transitionId }, agent);
    await expectAppError(
      transitionTask(t.db, b.id, { expected_version: 1, to: "PLANNING", transition_id: transitionId }, agent),
      "idempotency_conflict",
    );
    expect((await taskRow(b.id))?.version).toBe(1);
    expect(await transitionRows(b.id)).toHaveLength(1);
  });

  it("leaves the task and its log untouched when the transition breaks an invariant", async () => {
    const task = await newAgentTask({ subtasks: [{ id: "refund", title: "Refund", mandatory: true }] });
    await walk(task.id, ["PLANNING", "READY", "RUNNING", "WAITING_FOR_TOOL"]);
    await transitionTask(
      t.db,
      task.id,
      { expected_version: 5, patch: { budget: { hops_used: 5, tokens_spent: 50 } } },
      agent,
    );
    const before = await taskRow(task.id);
    const logBefore = await transitionRows(task.id);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ to: "COMPLETED" }, "completion_requires_validation"],
      [{ to: "VALIDATING", patch: { budget: { hops_used: 0, tokens_spent: 0 } } }, "budget_never_decreases"],
      [{ to: "VALIDATING", patch: { subtasks: [{ id: "refund", mandatory: false }] } }, "mandatory_flag_is_sticky"],
      [{ patch: { budget: { currency_spent_usd: 1 } } }, "budget_within_commitment"],
    ];
    for (const [body, invariant] of cases) {
      const error = await expectAppError(
        transitionTask(t.db, task.id, { expected_version: before!.version, ...body }, agent),
        "invariant_violated",
      );
      expect(error.details.violations?.map((v) => v.invariant)).toContain(invariant);
      expect(error.status).toBe(422);
    }
    await walk(task.id, ["VALIDATING"]);
    const validating = await taskRow(task.id);
    const error = await expectAppError(
      transitionTask(t.db, task.id, { expected_version: validating!.version, to: "COMPLETED" }, agent),
      "invariant_violated",
    );
    expect(error.details.violations?.map((v) => v.invariant)).toEqual(["mandatory_subtasks_completed"]);
    expect(await taskRow(task.id)).toEqual(validating);
    expect(await transitionRows(task.id)).toEqual([...logBefore, expect.objectContaining({ to_status: "VALIDATING" })]);
    // With the subtask done, the same completion goes through.
    const done = await transitionTask(
      t.db,
      task.id,
      {
        expected_version: validating!.version,
        to: "COMPLETED",
        patch: { subtasks: [{ id: "refund", status: "COMPLETED" }] },
      },
      agent,
    );
    expect(done.task.status).toBe("COMPLETED");
    expect((await taskRow(task.id))?.status).toBe("COMPLETED");
  });

  it("refuses an edge to an actor kind it does not list (forbidden) without writing", async () => {
    const task = await newAgentTask();
    await walk(task.id, ["PLANNING", "READY", "RUNNING", "WAITING_FOR_HUMAN"]);
    const before = await taskRow(task.id);
    const error = await expectAppError(
      transitionTask(t.db, task.id, { expected_version: before!.version, to: "HUMAN_RESOLVED" }, agent),
      "forbidden",
    );
    expect(error.details.violations?.map((v) => v.invariant)).toEqual(["actor_permitted"]);
    expect(await taskRow(task.id)).toEqual(before);
    const resolved = await transitionTask(
      t.db,
      task.id,
      { expected_version: before!.version, to: "HUMAN_RESOLVED" },
      user,
    );
    expect(resolved.transition).toMatchObject({ actor: "user:alice", actorKind: "user" });
  });

  it("refuses every change of a terminal task", async () => {
    const task = await newAgentTask();
    await walk(task.id, ["CANCELLED"]);
    const before = await taskRow(task.id);
    for (const body of [{ to: "RUNNING" }, { patch: { artifacts: { review_report: "late" } } }]) {
      const error = await expectAppError(
        transitionTask(t.db, task.id, { expected_version: 2, ...body }, user),
        "invariant_violated",
      );
      expect(error.details.violations?.map((v) => v.invariant)).toEqual(["terminal_state_is_final"]);
    }
    expect(await taskRow(task.id)).toEqual(before);
    expect(await transitionRows(task.id)).toHaveLength(2);
  });

  it("refuses malformed input before touching the database", async () => {
    const task = await newAgentTask();
    await expectAppError(transitionTask(t.db, task.id, { to: "PLANNING" }, agent), "validation_failed");
    const bad = await expectAppError(
      transitionTask(t.db, task.id, { expected_version: 1, patch: { gates: { ceo_approved: true } } }, agent),
      "validation_failed",
    );
    expect(bad.details.errors?.[0]?.field).toBe("patch.gates.ceo_approved");
    await expectAppError(
      transitionTask(t.db, "task_missing", { expected_version: 1, to: "PLANNING" }, agent),
      "not_found",
    );
    expect((await taskRow(task.id))?.version).toBe(1);
  });

  it("keeps the log gapless: one row per version, each from the version before it, with the state it produced", async () => {
    const task = await newAgentTask();
    const path = [
      "PLANNING",
      "READY",
      "RUNNING",
      "WAITING_FOR_TOOL",
      "RUNNING",
      "FAILED",
      "RECOVERING",
      "RECONCILING",
      "RUNNING",
      "WAITING_FOR_TOOL",
      "VALIDATING",
      "COMPLETED",
    ];
    for (const [i, to] of path.entries()) {
      // In-place updates between moves, and a stale write that must leave no trace.
      await transitionTask(
        t.db,
        task.id,
        { expected_version: 1 + 2 * i, patch: { budget: { hops_used: i + 1 } } },
        agent,
      );
      await expectAppError(
        transitionTask(t.db, task.id, { expected_version: 1 + 2 * i, to }, agent),
        "version_conflict",
      );
      await transitionTask(t.db, task.id, { expected_version: 2 + 2 * i, to }, agent);
    }
    const log = await transitionRows(task.id);
    const final = await taskRow(task.id);
    expect(final).toMatchObject({ version: 1 + 2 * path.length, status: "COMPLETED" });
    expect(log.map((r) => r.to_version)).toEqual(Array.from({ length: final!.version }, (_, i) => i + 1));
    for (const [i, r] of log.entries()) {
      expect(r.from_version).toBe(i === 0 ? null : i);
      expect(r.from_status).toBe(i === 0 ? null : log[i - 1]?.to_status);
      expect(r.state_after).toMatchObject({ version: r.to_version, status: r.to_status });
    }
    const viaApi = await listTransitions(t.db, task.id);
    expect(viaApi.map((v) => v.toVersion)).toEqual(log.map((r) => r.to_version));
    expect((await listTransitions(t.db, task.id, { afterVersion: 20, limit: 3 })).map((v) => v.toVersion)).toEqual([
      21, 22, 23,
    ]);
  });

  it("reads back what it wrote: getTask, getTaskOrThrow and getTaskVersion", async () => {
    const task = await newAgentTask();
    const result = await walk(task.id, ["PLANNING"]);
    // The result is built without a read-back; it must still be exactly what a reader sees.
    expect(await getTask(t.db, task.id)).toEqual(result.task);
    expect((await listTransitions(t.db, task.id)).at(-1)).toEqual(result.transition);
    expect(await getTaskVersion(t.db, task.id)).toBe(2);
    expect((await getTask(t.db, task.id))?.state).toEqual((await taskRow(task.id))?.state);
    expect(await getTask(t.db, "task_nope")).toBeNull();
    expect(await getTaskVersion(t.db, "task_nope")).toBeNull();
    await expectAppError(getTaskOrThrow(t.db, "task_nope"), "not_found");
  });
});
