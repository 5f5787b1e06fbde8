/**
 * The console's workflows pages on a real PGlite with the registry: the
 * registry's listing (current version, tasks per version), a comparison's
 * defaults and refusals in words, the migration page's defaults, and the
 * migration form's plan and confirmation as the server actions run them
 * (lib/adapters/console/workflows/migration-actions.ts through
 * runFormAction): permission, a dry run per task with refusals in words, a
 * plan applied once per task, a task that moved since refused as stale.
 */
import { describe, expect, it, vi, type Mock } from "vitest";
import { runFormAction, type FormActionDeps } from "@/lib/adapters/actions/form-action";
import { requirePermission, userIdentity, type Principal, type Role } from "@/lib/model/permissions";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { publishWorkflow } from "@/lib/use-cases/workflows/publish-workflow";
import type { WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";
import {
  loadWorkflowCompare,
  loadWorkflowMigration,
  loadWorkflowRegistry,
  loadWorkflowVersion,
} from "@/lib/adapters/console/workflows/workflow-pages";
import { applyMigrationSpec, planMigrationSpec } from "@/lib/adapters/console/workflows/migration-actions";
import { agent } from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

const db = useTestDatabase();

function person(username: string, role: Role): Principal {
  return {
    kind: "user",
    id: username,
    identity: userIdentity(username),
    role,
    tenantId: "default",
    displayName: username,
  };
}
const eli = person("eli", "engineer");
const olivia = person("olivia", "operator");
const admin = { identity: userIdentity("ada"), kind: "user" } as const;

function deps(principal: Principal): FormActionDeps & { refresh: Mock<() => void> } {
  return { authorize: async (permission) => requirePermission(principal, permission), refresh: vi.fn<() => void>() };
}

function form(fields: Record<string, string>): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.set(k, v);
  return data;
}

const v1: WorkflowDefinitionData = {
  name: "ship-console",
  version: 1,
  title: "Ship",
  description: "Plan, build, review and ship.",
  initial: "planning",
  states: {
    planning: { description: "Planning." },
    building: { description: "Building." },
    reviewing: { description: "Reviewing." },
    done: { description: "Done.", terminal: true, success: true },
    dropped: { description: "Dropped.", terminal: true },
  },
  transitions: [
    { from: "planning", to: "building", by: ["agent"], description: "Build" },
    { from: "building", to: "reviewing", by: ["agent"], description: "Review" },
    { from: "reviewing", to: "done", by: ["agent"], description: "Ship" },
  ],
  fromAnyNonTerminal: [{ to: "dropped", by: ["agent", "user"], description: "Drop" }],
  rejections: [],
};

// v2 renames reviewing to testing and requires the plan's approval while building.
const v2: WorkflowDefinitionData = {
  ...v1,
  version: 2,
  states: {
    planning: { description: "Planning." },
    building: { description: "Building.", requiresGates: ["plan_approved"] },
    testing: { description: "Testing." },
    done: { description: "Done.", terminal: true, success: true },
    dropped: { description: "Dropped.", terminal: true },
  },
  transitions: [
    {
      from: "planning",
      to: "building",
      by: ["agent"],
      guards: [{ kind: "gates_true", gates: ["plan_approved"] }],
      description: "Build",
    },
    { from: "building", to: "testing", by: ["agent"], description: "Test" },
    { from: "testing", to: "done", by: ["agent"], description: "Ship" },
  ],
};

async function newTask(id: string) {
  return (await createTask(db, { workflow: v1.name, task_id: id, intent_id: `intent-${id}` }, agent)).task;
}

describe("the workflows pages and the migration form", () => {
  it("plans, applies once per task, and refuses a stale plan and an operator, in words", async () => {
    await publishWorkflow(db, v1, admin);
    const waiting = await newTask("mig-waiting");
    const moving = await newTask("mig-moving");
    const built = await transitionTask(
      db,
      (await newTask("mig-built")).id,
      { expected_version: 1, to: "building" },
      agent,
    );
    await publishWorkflow(db, v2, admin);

    // The registry: newest first, v2 current, three tasks on v1.
    const entry = (await loadWorkflowRegistry(db)).find((w) => w.name === v1.name);
    expect(entry?.versions.map((v) => [v.version, v.current, v.taskCount, v.builtIn])).toEqual([
      [2, true, 0, false],
      [1, false, 3, false],
    ]);
    expect(entry?.versions[0]?.publishedBy).toBe(admin.identity);
    expect((await loadWorkflowRegistry(db)).map((w) => w.name)).toEqual(
      expect.arrayContaining(["agent-task", "delivery", v1.name]),
    );
    const page = await loadWorkflowVersion(db, v1.name, 2);
    expect(page?.graph.states.find((s) => s.name === "building")?.requiresGates).toEqual(["plan_approved"]);
    expect(await loadWorkflowVersion(db, v1.name, 3)).toBeNull();

    // A comparison: by default the newest against the one before; a missing version said in words.
    const compare = await loadWorkflowCompare(db, v1.name, undefined, undefined);
    expect([compare?.compare?.from.version, compare?.compare?.to.version]).toEqual([1, 2]);
    expect(compare?.compare?.sections.find((s) => s.id === "states")?.lines.map((l) => [l.mark, l.subject])).toEqual([
      ["added", "testing"],
      ["removed", "reviewing"],
      ["changed", "building"],
    ]);
    expect((await loadWorkflowCompare(db, v1.name, "7", "2"))?.problem).toBe(
      "7 is not a version of ship-console; it has v2, v1.",
    );
    expect((await loadWorkflowCompare(db, v1.name, "2", "2"))?.problem).toBe(
      "Pick two different versions: both are v2.",
    );

    // The migration page: v1 → v2, same-named states mapped, the renamed one left for the engineer.
    const migration = await loadWorkflowMigration(db, v1.name, undefined, undefined);
    expect([migration?.pair?.from.version, migration?.pair?.to.version]).toEqual([1, 2]);
    expect(migration?.pair?.initialMapping).toEqual({ planning: "planning", building: "building" });
    expect((await loadWorkflowMigration(db, v1.name, "2", "1"))?.problem).toBe(
      "Tasks move only to a newer version than their own: v1 is not newer than v2.",
    );

    const fields = {
      name: v1.name,
      fromVersion: "1",
      toVersion: "2",
      "map:planning": "planning",
      "map:building": "building",
      "map:reviewing": "",
    };
    // An operator may not even plan: the plan lists every running task of a version.
    expect(
      await runFormAction(
        planMigrationSpec(() => db),
        form(fields),
        deps(olivia),
      ),
    ).toEqual({
      status: "error",
      message: "Not allowed: The operator role does not have the workflows:migrate permission. Nothing was planned.",
    });

    const planned = await runFormAction(
      planMigrationSpec(() => db),
      form(fields),
      deps(eli),
    );
    if (planned.status !== "done") throw new Error(`expected a plan, got ${JSON.stringify(planned)}`);
    const byId = new Map(planned.plan.tasks.map((t) => [t.taskId, t]));
    expect(byId.get(waiting.id)).toMatchObject({ from: "planning", to: "planning", allowed: true, version: 1 });
    expect(byId.get(moving.id)).toMatchObject({ allowed: true, version: 1 });
    const refused = byId.get(built.task.id);
    expect(refused).toMatchObject({ from: "building", to: "building", allowed: false });
    expect(refused?.reasons.join(" ")).toContain("plan_approved");
    expect(planned.plan.mapping).toEqual([
      { from: "planning", to: "planning" },
      { from: "building", to: "building" },
      { from: "reviewing", to: null },
    ]);

    // One of the planned tasks moves on before the confirmation: it is refused as stale and keeps its state.
    await transitionTask(db, moving.id, { expected_version: 1, to: "building" }, agent);
    const confirm = { ...fields, [`task:${waiting.id}`]: "1", [`task:${moving.id}`]: "1" };
    const noReason = await runFormAction(
      applyMigrationSpec(() => db),
      form({ ...confirm, reason: " " }),
      deps(eli),
    );
    expect(noReason).toEqual({
      status: "error",
      message: "Give a reason: it is recorded on each task's transition and in the audit log.",
    });
    const d = deps(eli);
    const applied = await runFormAction(
      applyMigrationSpec(() => db),
      form({ ...confirm, reason: "v2 requires plan approval" }),
      d,
    );
    if (applied.status !== "done") throw new Error(`expected a result, got ${JSON.stringify(applied)}`);
    expect(applied.message).toBe("Moved 1 of 2 tasks to ship-console v2; 1 refused and left as they were.");
    expect(applied.results).toEqual([
      { taskId: waiting.id, outcome: "moved", message: "now on v2 in planning, at version 2." },
      { taskId: moving.id, outcome: "refused", message: expect.stringContaining("moved since the plan") },
    ]);
    expect(d.refresh).toHaveBeenCalledTimes(1);
    expect((await getTaskOrThrow(db, waiting.id)).workflow.version).toBe(2);
    expect((await getTaskOrThrow(db, moving.id)).workflow.version).toBe(1);

    // The same confirmation again finds the moved task at a newer version: refused, never moved twice.
    const again = await runFormAction(
      applyMigrationSpec(() => db),
      form({ ...confirm, reason: "again" }),
      deps(eli),
    );
    expect(again.status === "done" && again.results.map((r) => r.outcome)).toEqual(["refused", "refused"]);
    expect((await loadWorkflowRegistry(db)).find((w) => w.name === v1.name)?.versions.map((v) => v.taskCount)).toEqual([
      1, 2,
    ]);
  });
});
