import { describe, expect, it } from "vitest";
import { isAppError } from "@/lib/core/errors";
import type { Actor } from "@/lib/model/actor";
import { documentOf, workflowDefinitions } from "@/lib/model/workflows";
import { deliveryV2 } from "@/lib/model/workflows/delivery";
import { defineWorkflow, type WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { getTaskOrThrow, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { getWorkflow } from "@/lib/use-cases/workflows/get-workflow";
import { listWorkflowVersions } from "@/lib/use-cases/workflows/list-workflow-versions";
import { publishWorkflow } from "@/lib/use-cases/workflows/publish-workflow";
import { planWorkflowMigration } from "@/lib/use-cases/workflows/plan-workflow-migration";
import { applyWorkflowMigration } from "@/lib/use-cases/workflows/apply-workflow-migration";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * The workflow registry on a real database: the shipped definitions
 * registered at start, publishing (422 with every problem, 409, replay,
 * audit), a task on a published version driven through its declared
 * guards and checkpoint boundary, and running tasks moved to a newer
 * version, or refused.
 */
const db = useTestDatabase();

const admin: Actor = { identity: "spiffe://verity.local/user/ada", kind: "user" };
const engineer: Actor = { identity: "spiffe://verity.local/user/eli", kind: "user" };
const agent: Actor = { identity: "spiffe://verity.local/agent/coder", kind: "agent" };

async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    if (!isAppError(error)) throw error;
    return { code: error.code, status: error.status, message: error.message, details: error.details };
  }
  throw new Error("expected a failure");
}

/** A team's own release flow: plan (no tool), build, ship (a checkpoint on entering it), done. */
const release: WorkflowDefinitionData = {
  name: "release-train",
  version: 1,
  title: "Release train",
  description: "Plan a release, build it, ship it.",
  initial: "planning",
  states: {
    planning: { description: "Writing the release plan.", tools: [] },
    building: { description: "Building the release.", requiresGates: ["plan_approved"], tools: ["crm.add_note"] },
    shipping: { description: "Shipping it.", requiresGates: ["plan_approved"], checkpoint: true },
    shipped: { description: "Shipped.", terminal: true, success: true },
    abandoned: { description: "Abandoned.", terminal: true },
  },
  transitions: [
    {
      from: "planning",
      to: "building",
      by: ["agent"],
      guards: [
        { kind: "gates_true", gates: ["plan_approved"] },
        { kind: "artifact_present", artifact: "implementation_plan" },
      ],
      description: "Plan approved and written: build",
    },
    { from: "building", to: "shipping", by: ["agent"], description: "Built: ship" },
    {
      from: "shipping",
      to: "shipped",
      by: ["agent"],
      guards: [{ kind: "budget_within_commitment" }],
      description: "Shipped",
    },
  ],
  fromAnyNonTerminal: [{ to: "abandoned", by: ["agent", "user"], description: "Abandon" }],
  rejections: [],
};

describe("the shipped definitions", () => {
  it("are registered at start under their own digests, once, as part of the release (not audited as anyone's act)", async () => {
    const rows = await db.workflowVersion.findMany({ orderBy: [{ name: "asc" }, { version: "asc" }] });
    expect(rows.map((r) => [r.name, r.version, r.digest, r.builtIn])).toEqual(
      workflowDefinitions.map((d) => [d.name, d.version, d.digest, true]),
    );
    // A second start, and a third, register nothing and audit nothing.
    expect(await registerBuiltInWorkflows(db)).toEqual([]);
    expect(await registerBuiltInWorkflows(db)).toEqual([]);
    expect(await db.auditEntry.count({ where: { action: "workflow.published" } })).toBe(0);
    // Each stored definition is the published form: it digests to the digest it is stored under.
    for (const row of rows)
      expect(defineWorkflow(row.definition as unknown as WorkflowDefinitionData).digest).toBe(row.digest);
  });

  it("new tasks are created under the registry's newest version", async () => {
    const { task } = await createTask(db, { workflow: "delivery", intent_id: "i-newest" }, agent);
    expect(task.workflow).toEqual({ name: "delivery", version: 2, digest: deliveryV2.digest });
  });
});

describe("publishWorkflow", () => {
  it("refuses an invalid definition with every problem at its JSON path (422), writing nothing", async () => {
    const bad = {
      ...release,
      states: { ...release.states, building: { ...release.states.building!, tools: ["crm.add_note", "git.push"] } },
      transitions: [
        ...release.transitions,
        { from: "shipped", to: "planning", by: ["agent"], description: "Reopen" },
        { from: "building", to: "shipping", by: ["robot"], description: "Again" },
      ],
    };
    const refused = await failure(publishWorkflow(db, bad, admin));
    expect(refused).toMatchObject({ code: "definition_invalid", status: 422 });
    expect((refused.details.problems as Array<{ path: string; code: string }>).map((p) => [p.path, p.code])).toEqual([
      ["$.transitions[4].by[0]", "unknown_actor"],
      ["$.states.building.tools[1]", "unknown_tool"],
      ["$.transitions[3].from", "terminal_has_edges"],
      ["$.transitions[4]", "duplicate_edge"],
    ]);
    expect(await db.workflowVersion.count({ where: { name: "release-train" } })).toBe(0);
  });

  it("publishes a new workflow, audited in the same transaction; the same content again is a replay", async () => {
    const first = await publishWorkflow(db, release, admin);
    expect(first.kind).toBe("published");
    expect(first.version).toMatchObject({
      name: "release-train",
      version: 1,
      builtIn: false,
      publishedBy: admin.identity,
    });
    expect(first.version.definition).toEqual(release);
    const audited = await db.auditEntry.findMany({
      where: { action: "workflow.published", subjectId: first.version.digest },
    });
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ actor: admin.identity, details: { workflow: "release-train", version: 1 } });

    const again = await publishWorkflow(db, structuredClone(release), admin);
    expect(again.kind).toBe("already_published");
    expect(again.version.digest).toBe(first.version.digest);
    expect(
      await db.auditEntry.count({ where: { action: "workflow.published", subjectId: first.version.digest } }),
    ).toBe(1);
  });

  it("refuses other content under a published version (409), naming the digest it holds", async () => {
    const published = await getWorkflow(db, "release-train", 1);
    const refused = await failure(publishWorkflow(db, { ...release, title: "Release train, edited" }, admin));
    expect(refused).toMatchObject({ code: "idempotency_conflict", status: 409 });
    expect(refused.message).toContain(published.digest);
  });

  it("refuses a version that is not above the newest (422 at $.version)", async () => {
    await publishWorkflow(db, { ...release, version: 3, title: "Release train 3" }, admin);
    const refused = await failure(publishWorkflow(db, { ...release, version: 2, title: "Release train 2" }, admin));
    expect(refused).toMatchObject({ code: "definition_invalid", status: 422 });
    expect(refused.details.problems).toEqual([
      expect.objectContaining({ path: "$.version", code: "version_not_newer" }),
    ]);
    expect((await listWorkflowVersions(db, { name: "release-train" })).map((v) => v.version)).toEqual([3, 1]);
  });
});

describe("a task on a published workflow", () => {
  it("is driven through the declared guards, and entering a checkpoint state takes a checkpoint", async () => {
    const { task } = await createTask(
      db,
      { workflow: "release-train", intent_id: "i-release", budget: { currency_committed_usd: 5 } },
      agent,
    );
    expect(task.workflow.version).toBe(3);
    const approved = await transitionTask(
      db,
      task.id,
      { expected_version: 1, patch: { gates: { plan_approved: true } } },
      agent,
    );
    // artifact_present: leaving planning without the plan is refused, naming the guard.
    const refused = await failure(
      transitionTask(db, task.id, { expected_version: approved.task.version, to: "building" }, agent),
    );
    expect(refused.code).toBe("invariant_violated");
    expect((refused.details.violations ?? []).map((v) => v.invariant)).toEqual(["guard_artifact_present"]);
    const building = await transitionTask(
      db,
      task.id,
      {
        expected_version: approved.task.version,
        to: "building",
        patch: { artifacts: { implementation_plan: "Cut 4.2." } },
      },
      agent,
    );
    const before = await db.checkpoint.count({ where: { taskId: task.id, trigger: "state_boundary" } });
    const shipping = await transitionTask(
      db,
      task.id,
      { expected_version: building.task.version, to: "shipping" },
      agent,
    );
    expect(await db.checkpoint.count({ where: { taskId: task.id, trigger: "state_boundary" } })).toBe(before + 1);
    const shipped = await transitionTask(
      db,
      task.id,
      { expected_version: shipping.task.version, to: "shipped" },
      agent,
    );
    expect(shipped.task.status).toBe("shipped");
    const versions = await listWorkflowVersions(db, { name: "release-train" });
    expect(versions.find((v) => v.version === 3)?.tasks).toBe(1);
  });
});

describe("moving running tasks to a newer version", () => {
  /** delivery v3: a checkpoint on entering review, and the plan must be written before implementing. */
  const deliveryV3: WorkflowDefinitionData = {
    ...documentOf(deliveryV2),
    version: 3,
    states: { ...deliveryV2.states, reviewing: { ...deliveryV2.states.reviewing!, checkpoint: true } },
    transitions: deliveryV2.transitions.map((t) =>
      t.from === "planning" && t.to === "implementing"
        ? {
            ...t,
            guards: [
              ...(t.guards ?? []),
              { kind: "artifact_present" as const, artifact: "implementation_plan" as const },
            ],
          }
        : t,
    ),
  };
  const mapping = { planning: "planning", implementing: "reviewing", reviewing: "reviewing", testing: "testing" };

  it("plans, applies as a CAS transition with its transition row and audit entry, and refuses what the new version's invariants forbid", async () => {
    // Created before v3 exists: pinned to v2.
    const ready = (await createTask(db, { workflow: "delivery", intent_id: "i-ready" }, agent)).task;
    const notReady = (await createTask(db, { workflow: "delivery", intent_id: "i-not-ready" }, agent)).task;
    const ended = (await createTask(db, { workflow: "delivery", intent_id: "i-ended" }, agent)).task;
    let readyVersion = 1;
    for (const step of [
      { patch: { gates: { plan_approved: true } } },
      { to: "implementing" },
      { patch: { gates: { implementation_complete: true } } },
    ])
      readyVersion = (await transitionTask(db, ready.id, { expected_version: readyVersion, ...step }, agent)).task
        .version;
    let notReadyVersion = (
      await transitionTask(db, notReady.id, { expected_version: 1, patch: { gates: { plan_approved: true } } }, agent)
    ).task.version;
    notReadyVersion = (
      await transitionTask(db, notReady.id, { expected_version: notReadyVersion, to: "implementing" }, agent)
    ).task.version;
    await transitionTask(db, ended.id, { expected_version: 1, to: "cancelled" }, agent);
    expect((await publishWorkflow(db, deliveryV3, admin)).kind).toBe("published");

    const plan = await planWorkflowMigration(db, {
      workflow: "delivery",
      to_version: 3,
      task_ids: [ready.id, notReady.id, ended.id, "task-none"],
      state_mapping: mapping,
    });
    const byId = Object.fromEntries(plan.tasks.map((t) => [t.task_id, t]));
    expect(byId[ready.id]).toMatchObject({
      allowed: true,
      current_state: "implementing",
      mapped_state: "reviewing",
      task_version: readyVersion,
    });
    expect(byId[notReady.id]).toMatchObject({ allowed: false, mapped_state: "reviewing" });
    expect(byId[notReady.id]?.refusals.map((r) => r.invariant)).toEqual(["gates_required_by_status"]);
    expect(byId[ended.id]?.refusals.map((r) => r.invariant)).toEqual(["terminal_state_is_final"]);
    expect(byId["task-none"]?.refusals.map((r) => r.invariant)).toEqual(["task_exists"]);
    expect(plan).toMatchObject({ movable: 1, refused: 3 });
    // A dry run: nothing moved.
    expect((await getTaskOrThrow(db, ready.id)).workflow.version).toBe(2);

    const applied = await applyWorkflowMigration(
      db,
      {
        workflow: "delivery",
        to_version: 3,
        state_mapping: mapping,
        tasks: [
          { task_id: ready.id, expected_version: readyVersion },
          { task_id: notReady.id, expected_version: notReadyVersion },
        ],
        reason: "Review checkpoints for the running work",
      },
      engineer,
    );
    expect(applied).toMatchObject({ migrated: 1, refused: 1 });
    expect(applied.tasks[0]).toMatchObject({
      task_id: ready.id,
      outcome: "migrated",
      status: "reviewing",
      version: readyVersion + 1,
    });
    expect(applied.tasks[1]).toMatchObject({ task_id: notReady.id, outcome: "refused" });

    const moved = await getTaskOrThrow(db, ready.id);
    const v3 = await getWorkflow(db, "delivery", 3);
    expect(moved).toMatchObject({
      status: "reviewing",
      version: readyVersion + 1,
      workflow: { version: 3, digest: v3.digest },
    });
    expect(moved.state.workflow_digest).toBe(v3.digest);
    const last = (await listTransitions(db, ready.id)).at(-1);
    expect(last).toMatchObject({
      fromVersion: readyVersion,
      toVersion: readyVersion + 1,
      fromStatus: "implementing",
      toStatus: "reviewing",
      actor: engineer.identity,
    });
    expect(last?.reason).toContain("Review checkpoints for the running work");
    const entry = await db.auditEntry.findFirst({ where: { action: "task.workflow_migrated", taskId: ready.id } });
    expect(entry?.details).toMatchObject({
      from_workflow: { version: 2 },
      to_workflow: { version: 3, digest: v3.digest },
      state_mapping: mapping,
    });
    const untouched = await getTaskOrThrow(db, notReady.id);
    expect(untouched).toMatchObject({ version: notReadyVersion, workflow: { version: 2 } });
    // The moved task now runs under v3's rules.
    const next = await transitionTask(
      db,
      ready.id,
      { expected_version: moved.version, patch: { gates: { review_passed: true } } },
      agent,
    );
    expect(next.task.workflow.version).toBe(3);
  });

  it("refuses a stale plan: a task that moved since is not migrated over its newer state", async () => {
    // The task the previous test's migration refused: still on v2, in implementing.
    const v2Task = await db.task.findFirstOrThrow({ where: { workflowVersion: 2, status: "implementing" } });
    const plan = await planWorkflowMigration(db, {
      workflow: "delivery",
      to_version: 3,
      from_digest: deliveryV2.digest,
      state_mapping: { ...mapping, implementing: "implementing" },
    });
    const planned = plan.tasks.find((t) => t.task_id === v2Task.id);
    expect(planned).toMatchObject({ allowed: true, task_version: v2Task.version });
    // The task moves on after the plan was shown.
    await transitionTask(
      db,
      v2Task.id,
      { expected_version: v2Task.version, patch: { artifacts: { code_files: ["a.ts"] } } },
      agent,
    );
    const applied = await applyWorkflowMigration(
      db,
      {
        workflow: "delivery",
        to_version: 3,
        state_mapping: plan.state_mapping,
        tasks: [{ task_id: v2Task.id, expected_version: v2Task.version }],
        reason: "Move the rest",
      },
      engineer,
    );
    expect(applied.tasks[0]).toMatchObject({ outcome: "refused" });
    const refusal = applied.tasks[0]?.outcome === "refused" ? applied.tasks[0].refusals : [];
    expect(refusal.map((r) => r.invariant)).toEqual(["migration_plan_current"]);
    expect(refusal[0]?.message).toContain(`planned at version ${v2Task.version}`);
    expect((await getTaskOrThrow(db, v2Task.id)).workflow.version).toBe(2);
  });
});
