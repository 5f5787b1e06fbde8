import { expect, test } from "@playwright/test";
import { AgentApi, authHeaders, expectProblem, invariantsOf, type TaskBody } from "./agent-api";

test.use({ extraHTTPHeaders: authHeaders });

const done = (...ids: string[]) => ({ subtasks: ids.map((id) => ({ id, status: "COMPLETED" })) });

/** Proposes `to` with the current version; asserts a 422 naming `invariant` and that nothing changed. */
async function expectRejected(api: AgentApi, task: TaskBody, to: string, invariant: string): Promise<void> {
  const res = await api.transition(task.id, { to }, { "If-Match": `"${task.version}"` });
  const problem = await expectProblem(res, 422, "invariant-violated");
  expect(invariantsOf(problem)).toContain(invariant);
  expect(problem.violations!.every((v) => typeof v.message === "string" && v.message.length > 0)).toBe(true);
  await api.expectUnchanged(task);
}

test("COMPLETED → RUNNING is refused: terminal_state_is_final", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.drive(await api.createAgentTask(), [
    "PLANNING",
    "READY",
    "RUNNING",
    "WAITING_FOR_TOOL",
    { to: "VALIDATING", patch: done("lookup-order", "issue-refund") },
    "COMPLETED",
  ]);
  expect(task.status).toBe("COMPLETED");
  await expectRejected(api, task, "RUNNING", "terminal_state_is_final");
});

test("WAITING_FOR_TOOL → COMPLETED is refused: completion_requires_validation", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.drive(await api.createAgentTask(), ["PLANNING", "READY", "RUNNING", "WAITING_FOR_TOOL"]);
  await expectRejected(api, task, "COMPLETED", "completion_requires_validation");
});

test("FAILED → COMPLETED is refused: failure_requires_recovery", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.drive(await api.createAgentTask(), ["PLANNING", "READY", "RUNNING", "FAILED"]);
  await expectRejected(api, task, "COMPLETED", "failure_requires_recovery");
});

test("VALIDATING → COMPLETED with an open mandatory subtask is refused: mandatory_subtasks_completed", async ({
  request,
}) => {
  const api = new AgentApi(request);
  const task = await api.drive(await api.createAgentTask(), [
    "PLANNING",
    "READY",
    "RUNNING",
    "WAITING_FOR_TOOL",
    { to: "VALIDATING", patch: done("lookup-order") },
  ]);
  await expectRejected(api, task, "COMPLETED", "mandatory_subtasks_completed");
  const problem = await expectProblem(
    await api.transition(task.id, { to: "COMPLETED" }, { "If-Match": `"${task.version}"` }),
    422,
    "invariant-violated",
  );
  expect(problem.detail).toContain("issue-refund");

  // Completing it in the same transition's patch satisfies the guard.
  const completed = await api.step(task, { to: "COMPLETED", patch: done("issue-refund") });
  expect(completed.status).toBe("COMPLETED");
});

test("delivery: planning → implementing before plan_approved is refused: gate_required", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createDeliveryTask();
  expect(task.status).toBe("planning");
  await expectRejected(api, task, "implementing", "gate_required");

  const approved = await api.step(task, { patch: { gates: { plan_approved: true } } });
  expect(approved.state.gates.plan_approved).toBe(true);
  const implementing = await api.step(approved, { to: "implementing" });
  expect(implementing.status).toBe("implementing");

  // A later stage cannot quietly un-approve the plan.
  const res = await api.transition(
    task.id,
    { patch: { gates: { plan_approved: false } } },
    { "If-Match": `"${implementing.version}"` },
  );
  expect(invariantsOf(await expectProblem(res, 422, "invariant-violated"))).toContain("gates_required_by_status");
  await api.expectUnchanged(implementing);
});

test("an edge the workflow does not have is refused: transition_defined", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  await expectRejected(api, task, "VALIDATING", "transition_defined");
  await expectRejected(api, task, "NOT_A_STATE", "status_in_workflow");
});
