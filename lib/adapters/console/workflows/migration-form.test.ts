import { describe, expect, it } from "vitest";
import { defaultMapping, mappingFromForm, plannedTasksFromForm } from "@/lib/adapters/console/workflows/migration-form";
import { describeMigrationPlan, describeMigrationResult } from "@/lib/adapters/console/workflows/migration-format";
import { deliveryV1 } from "@/lib/model/workflows/delivery";

describe("the migration form's fields", () => {
  it("maps each active state to the same-named state of the newer version, where it has one", () => {
    expect(defaultMapping(["planning", "building", "testing"], ["planning", "testing", "done"])).toEqual({
      planning: "planning",
      testing: "testing",
    });
  });

  it("reads the mapping from map:<state> fields, an empty choice meaning not moved, other fields ignored", () => {
    expect(
      mappingFromForm({
        name: "delivery",
        "map:planning": "planning",
        "map:reviewing": "",
        "map:testing": "reviewing",
      }),
    ).toEqual({ planning: "planning", testing: "reviewing" });
  });

  it("reads the planned tasks with the version the plan saw, leaving out a malformed one", () => {
    expect(plannedTasksFromForm({ "task:t-1": "4", "task:t-2": "x", "task:t-3": "0", reason: "r" })).toEqual([
      { taskId: "t-1", version: 4 },
    ]);
  });
});

describe("the plan and its result in words", () => {
  const digest = `sha256:${"a".repeat(64)}`;

  it("shows each task's move and a refusal with the engine's words and the rule's name", () => {
    const view = describeMigrationPlan(
      {
        workflow: "delivery",
        to: { version: 2, digest },
        state_mapping: { planning: "complete" },
        tasks: [
          {
            task_id: "t-1",
            task_version: 3,
            from: { version: 1, digest },
            current_state: "planning",
            mapped_state: "complete",
            allowed: false,
            refusals: [{ invariant: "migration_keeps_task_running", message: "A migration never ends a task." }],
          },
        ],
        movable: 0,
        refused: 1,
        planned_at: "2026-12-01T20:00:00.000Z",
      },
      { fromVersion: 1, fromDefinition: deliveryV1, mapping: { planning: "complete" } },
    );
    expect(view.mapping).toEqual([
      { from: "planning", to: "complete" },
      { from: "implementing", to: null },
      { from: "reviewing", to: null },
      { from: "testing", to: null },
    ]);
    expect(view.tasks).toEqual([
      {
        taskId: "t-1",
        version: 3,
        from: "planning",
        to: "complete",
        allowed: false,
        reasons: ["A migration never ends a task. (migration_keeps_task_running)"],
      },
    ]);
  });

  it("says how many moved and what happened to each, a refused one with why", () => {
    const { message, results } = describeMigrationResult({
      workflow: "delivery",
      to: { version: 2, digest },
      migrated: 1,
      refused: 1,
      tasks: [
        { task_id: "t-1", outcome: "migrated", version: 4, status: "planning", from: { version: 1, digest } },
        {
          task_id: "t-2",
          outcome: "refused",
          refusals: [{ invariant: "migration_plan_current", message: "Task t-2 moved since the plan. Plan again." }],
        },
      ],
    });
    expect(message).toBe("Moved 1 of 2 tasks to delivery v2; 1 refused and left as they were.");
    expect(results).toEqual([
      { taskId: "t-1", outcome: "moved", message: "now on v2 in planning, at version 4." },
      {
        taskId: "t-2",
        outcome: "refused",
        message: "Task t-2 moved since the plan. Plan again. (migration_plan_current)",
      },
    ]);
  });
});
