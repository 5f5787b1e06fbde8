import { expect, test, type Page } from "@playwright/test";
import type { WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";
import { authHeaders, expectProblem, uniqueId, type Problem, type TaskBody } from "./agent-api";
import { AgentsPage } from "../pages/agents-page";
import { signIn, signedInRequest } from "../pages/login-page";

/**
 * The workflow registry over HTTP: an admin (the console session; people
 * have no API tokens) publishes, fetches, edits and publishes again; the
 * refusals (409, 422 with every problem at its JSON path, 400 on a body
 * that is not JSON); an agent without the publish scope refused, one with
 * it allowed; a task created on the newly published workflow and driven
 * through it by an agent; and an engineer moving running tasks to a newer
 * version, one of them refused.
 */

interface VersionBody {
  definition: WorkflowDefinitionData;
  name: string;
  version: number;
  digest: string;
  built_in: boolean;
  published_by: string;
  published_at: string;
}
type DefinitionProblem = Problem & { problems?: Array<{ path: string; code: string; message: string }> };

/** A definition of this run's own: a name no other test or earlier run against the same database used. */
function releaseTrain(name: string): WorkflowDefinitionData {
  return {
    name,
    version: 1,
    title: "Release train",
    description: "Plan a release, build it, ship it.",
    initial: "planning",
    states: {
      planning: { description: "Writing the release plan.", tools: [] },
      building: { description: "Building it.", requiresGates: ["plan_approved"], checkpoint: true },
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
      { from: "building", to: "shipped", by: ["agent"], description: "Ship" },
    ],
    fromAnyNonTerminal: [{ to: "abandoned", by: ["agent", "user"], description: "Abandon" }],
    rejections: [],
  };
}

/** A team's CI agent: an admin creates it in the console, every workflow in scope and the publish scope for workflows. */
async function ciToken(page: Page): Promise<string> {
  await signIn(page, "admin", "/admin/agents");
  const agents = new AgentsPage(page);
  await agents.fillCreate({ name: uniqueId("ci").toLowerCase(), workflows: [], tools: [], publish: ["workflows"] });
  await agents.createForm.getByLabel("Every workflow, including ones added later").check();
  await agents.submitCreate();
  return (await agents.shownToken(agents.createForm)).secret;
}

const workflowName = () =>
  uniqueId("release")
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-");

test("an admin publishes a workflow, fetches it, edits it and publishes the edit; versions stay immutable", async ({
  playwright,
  baseURL,
}) => {
  const admin = await signedInRequest(playwright, baseURL, "admin");
  const doc = releaseTrain(workflowName());

  const created = await admin.post("/api/v1/workflows", { data: doc });
  expect(created.status(), await created.text()).toBe(201);
  const v1 = (await created.json()) as VersionBody;
  expect(v1).toMatchObject({
    name: doc.name,
    version: 1,
    built_in: false,
    published_by: "spiffe://verity.local/user/admin",
  });
  expect(v1.definition).toEqual(doc);
  expect(created.headers()["location"]).toBe(`/api/v1/workflows/${doc.name}/versions/1`);

  // The same content again: a replay, not a second version.
  const replay = await admin.post("/api/v1/workflows", { data: doc });
  expect(replay.status()).toBe(200);
  expect(replay.headers()["idempotent-replayed"]).toBe("true");
  expect(((await replay.json()) as VersionBody).digest).toBe(v1.digest);

  // Fetch → edit → publish: what GET returns under `definition` is exactly what POST accepts.
  const fetched = (await (await admin.get(`/api/v1/workflows/${doc.name}`)).json()) as VersionBody;
  expect(fetched.definition).toEqual(doc);
  const edit = { ...fetched.definition, version: 2, title: "Release train, with a review" };
  const v2res = await admin.post("/api/v1/workflows", { data: edit });
  expect(v2res.status(), await v2res.text()).toBe(201);
  const v2 = (await v2res.json()) as VersionBody;
  expect(v2.digest).not.toBe(v1.digest);

  const newest = await admin.get(`/api/v1/workflows/${doc.name}`);
  expect(((await newest.json()) as VersionBody).version).toBe(2);
  expect(newest.headers()["etag"]).toBe(`"${v2.digest}"`);
  const first = (await (await admin.get(`/api/v1/workflows/${doc.name}/versions/1`)).json()) as VersionBody;
  expect(first).toMatchObject({ version: 1, digest: v1.digest, definition: doc });
  await expectProblem(await admin.get(`/api/v1/workflows/${doc.name}/versions/3`), 404, "not-found");
  await expectProblem(await admin.get(`/api/v1/workflows/${doc.name}/versions/zero`), 400, "validation-failed");

  // Other content under a published version: 409 naming the digest it holds.
  const conflict = await expectProblem(
    await admin.post("/api/v1/workflows", { data: { ...doc, title: "Rewritten" } }),
    409,
    "idempotency-conflict",
  );
  expect(conflict.detail).toContain(v1.digest);
  // Not above the newest: 422 at $.version.
  expect(
    (await admin.post("/api/v1/workflows", { data: { ...doc, version: 4, title: "Release train 4" } })).status(),
  ).toBe(201);
  const below = (await expectProblem(
    await admin.post("/api/v1/workflows", { data: { ...doc, version: 3, title: "Release train 3" } }),
    422,
    "definition-invalid",
  )) as DefinitionProblem;
  expect(below.problems?.map((p) => `${p.code} ${p.path}`)).toEqual(["version_not_newer $.version"]);

  const listed = (await (await admin.get("/api/v1/workflows")).json()) as {
    items: Array<VersionBody & { tasks: number }>;
  };
  expect(listed.items.filter((v) => v.name === doc.name).map((v) => [v.version, v.tasks])).toEqual([
    [4, 0],
    [2, 0],
    [1, 0],
  ]);
  await admin.dispose();
});

test("bad definitions: 422 listing every problem at its JSON path, 400 for a body that is not JSON", async ({
  playwright,
  baseURL,
}) => {
  const admin = await signedInRequest(playwright, baseURL, "admin");
  const doc = releaseTrain(workflowName());
  const bad = {
    ...doc,
    states: {
      ...doc.states,
      building: { ...doc.states.building!, tools: ["git.force_push"] },
      orphan: { description: "Nothing leads here." },
    },
    transitions: [
      ...doc.transitions,
      { from: "shipped", to: "planning", by: ["agent"], description: "Reopen" },
      { from: "planning", to: "building", by: ["agent"], guards: [{ kind: "all_tests_green" }], description: "Again" },
    ],
  };
  const problem = (await expectProblem(
    await admin.post("/api/v1/workflows", { data: bad }),
    422,
    "definition-invalid",
  )) as DefinitionProblem;
  expect(problem.problems?.map((p) => `${p.code} ${p.path}`)).toEqual([
    "unknown_guard $.transitions[3].guards[0].kind",
    "unknown_tool $.states.building.tools[0]",
    "terminal_has_edges $.transitions[2].from",
    "duplicate_edge $.transitions[3]",
    // Not also no_path_to_terminal: fromAnyNonTerminal gives orphan its edge to abandoned.
    "unreachable_state $.states.orphan",
  ]);
  expect(problem.errors?.map((e) => e.field)).toContain("$.states.building.tools[0]");
  await expectProblem(
    await admin.post("/api/v1/workflows", { data: { ...doc, name: "migrations" } }),
    422,
    "definition-invalid",
  );
  // JSON that is not an object is a definition with one problem, at the root.
  const notAnObject = (await expectProblem(
    await admin.post("/api/v1/workflows", {
      data: Buffer.from('"a string"'),
      headers: { "Content-Type": "application/json" },
    }),
    422,
    "definition-invalid",
  )) as DefinitionProblem;
  expect(notAnObject.problems?.map((p) => `${p.code} ${p.path}`)).toEqual(["wrong_type $"]);
  // Bytes that are not JSON at all are a bad request.
  await expectProblem(
    await admin.post("/api/v1/workflows", {
      data: Buffer.from("{not json"),
      headers: { "Content-Type": "application/json" },
    }),
    400,
    "validation-failed",
  );
  expect((await admin.get(`/api/v1/workflows/${doc.name}`)).status()).toBe(404);
  await admin.dispose();
});

test("an agent without the publish scope is refused (403); a token with it publishes, creates a task on the new workflow and drives it", async ({
  page,
  playwright,
  baseURL,
}) => {
  const doc = releaseTrain(workflowName());
  const unscoped = await playwright.request.newContext({ baseURL, extraHTTPHeaders: authHeaders });
  const refused = await expectProblem(await unscoped.post("/api/v1/workflows", { data: doc }), 403, "forbidden");
  expect(refused.detail).toContain("publishing workflows");
  await unscoped.dispose();

  const ci = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${await ciToken(page)}` },
  });
  const published = await ci.post("/api/v1/workflows", { data: doc });
  expect(published.status(), await published.text()).toBe(201);
  const version = (await published.json()) as VersionBody;

  const created = await ci.post("/api/v1/tasks", {
    data: { workflow: doc.name, task_id: uniqueId("train"), intent_id: uniqueId("intent") },
  });
  expect(created.status(), await created.text()).toBe(201);
  let task = (await created.json()) as TaskBody;
  expect(task.workflow).toEqual({ name: doc.name, version: 1, digest: version.digest });
  expect(task.status).toBe("planning");
  const step = async (body: Record<string, unknown>) => {
    const res = await ci.post(`/api/v1/tasks/${task.id}/transitions`, {
      data: { expected_version: task.version, ...body },
    });
    return res;
  };
  let res = await step({ patch: { gates: { plan_approved: true } } });
  expect(res.status(), await res.text()).toBe(200);
  task = ((await res.json()) as { task: TaskBody }).task;
  // The published guard: no plan written, no building.
  const guarded = await expectProblem(await step({ to: "building" }), 422, "invariant-violated");
  expect(guarded.violations?.map((v) => v.invariant)).toEqual(["guard_artifact_present"]);
  res = await step({ to: "building", patch: { artifacts: { implementation_plan: "Cut 4.2 from main." } } });
  expect(res.status(), await res.text()).toBe(200);
  task = ((await res.json()) as { task: TaskBody }).task;
  // Entering `building` is a declared checkpoint boundary.
  const checkpoints = (await (await ci.get(`/api/v1/tasks/${task.id}/checkpoints`)).json()) as {
    items: Array<{ trigger: string; state_version: number }>;
  };
  expect(checkpoints.items).toContainEqual(
    expect.objectContaining({ trigger: "state_boundary", state_version: task.version }),
  );
  res = await step({ to: "shipped" });
  expect(res.status(), await res.text()).toBe(200);
  expect(((await res.json()) as { task: TaskBody }).task.status).toBe("shipped");
  await ci.dispose();
});

test("an engineer moves running tasks to a newer version after a dry-run plan; a task the new version refuses stays", async ({
  page,
  playwright,
  baseURL,
}) => {
  const admin = await signedInRequest(playwright, baseURL, "admin");
  const ci = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${await ciToken(page)}` },
  });
  const engineer = await signedInRequest(playwright, baseURL, "engineer");
  const doc = releaseTrain(workflowName());
  expect((await admin.post("/api/v1/workflows", { data: doc })).status()).toBe(201);
  const create = async (gates: Record<string, boolean>) => {
    const res = await ci.post("/api/v1/tasks", {
      data: { workflow: doc.name, task_id: uniqueId("mig"), intent_id: uniqueId("intent") },
    });
    expect(res.status(), await res.text()).toBe(201);
    let task = (await res.json()) as TaskBody;
    if (Object.keys(gates).length > 0) {
      const moved = await ci.post(`/api/v1/tasks/${task.id}/transitions`, {
        data: { expected_version: task.version, patch: { gates } },
      });
      expect(moved.status(), await moved.text()).toBe(200);
      task = ((await moved.json()) as { task: TaskBody }).task;
    }
    return task;
  };
  const approved = await create({ plan_approved: true });
  const unapproved = await create({});
  // v2 adds a review stage that requires the plan approved.
  const v2doc: WorkflowDefinitionData = {
    ...doc,
    version: 2,
    states: { ...doc.states, reviewing: { description: "Plan review.", requiresGates: ["plan_approved"] } },
    transitions: [
      ...doc.transitions,
      { from: "reviewing", to: "building", by: ["agent"], description: "Reviewed" },
      { from: "planning", to: "reviewing", by: ["agent"], description: "Review" },
    ],
  };
  expect((await admin.post("/api/v1/workflows", { data: v2doc })).status()).toBe(201);

  // Migrating is an engineer's: an agent's token is refused.
  const agent = await playwright.request.newContext({ baseURL, extraHTTPHeaders: authHeaders });
  const mapping = { planning: "reviewing" };
  const body = { workflow: doc.name, to_version: 2, task_ids: [approved.id, unapproved.id], state_mapping: mapping };
  await expectProblem(await agent.post("/api/v1/workflows/migrations/plan", { data: body }), 403, "forbidden");
  await agent.dispose();

  const planRes = await engineer.post("/api/v1/workflows/migrations/plan", { data: body });
  expect(planRes.status(), await planRes.text()).toBe(200);
  const plan = (await planRes.json()) as {
    tasks: Array<{ task_id: string; task_version: number; allowed: boolean; refusals: Array<{ invariant: string }> }>;
    movable: number;
  };
  expect(plan.movable).toBe(1);
  const ofTask = (id: string) => plan.tasks.find((t) => t.task_id === id)!;
  expect(ofTask(approved.id).allowed).toBe(true);
  expect(ofTask(unapproved.id).refusals.map((r) => r.invariant)).toEqual(["gates_required_by_status"]);

  const applyRes = await engineer.post("/api/v1/workflows/migrations", {
    data: {
      workflow: doc.name,
      to_version: 2,
      state_mapping: mapping,
      tasks: plan.tasks.map((t) => ({ task_id: t.task_id, expected_version: t.task_version })),
      reason: "Plans are reviewed from now on",
    },
  });
  expect(applyRes.status(), await applyRes.text()).toBe(200);
  const applied = (await applyRes.json()) as { migrated: number; tasks: Array<{ task_id: string; outcome: string }> };
  expect(applied.migrated).toBe(1);
  expect(applied.tasks.map((t) => [t.task_id, t.outcome])).toEqual([
    [approved.id, "migrated"],
    [unapproved.id, "refused"],
  ]);
  const moved = (await (await ci.get(`/api/v1/tasks/${approved.id}`)).json()) as TaskBody;
  expect(moved).toMatchObject({ status: "reviewing", version: approved.version + 1, workflow: { version: 2 } });
  const stayed = (await (await ci.get(`/api/v1/tasks/${unapproved.id}`)).json()) as TaskBody;
  expect(stayed).toMatchObject({ status: "planning", version: unapproved.version, workflow: { version: 1 } });
  await admin.dispose();
  await engineer.dispose();
  await ci.dispose();
});
