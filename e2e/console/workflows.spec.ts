import { expect, test } from "@playwright/test";
import { axeViolations } from "../pages/axe";
import { signIn } from "../pages/login-page";
import { WorkflowsPage } from "../pages/workflows-page";
import { everyWorkflowToken, publish, TaskDriver } from "../pages/workflow-seed";
import { signedInRequest } from "../pages/login-page";
import type { WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";

const runId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

/** A workflow of this run's own: v2 requires the review's approval while building. */
function shipTrain(version: 1 | 2): WorkflowDefinitionData {
  return {
    name: `ship-${runId}`,
    version,
    title: "Ship train",
    description: "Plan a change, build it, ship it.",
    initial: "planning",
    states: {
      planning: { description: "Planning the change." },
      building: {
        description: "Building it.",
        ...(version === 2 ? { requiresGates: ["review_passed" as const] } : {}),
      },
      shipped: { description: "Shipped.", terminal: true, success: true },
      dropped: { description: "Dropped.", terminal: true },
    },
    transitions: [
      { from: "planning", to: "building", by: ["agent"], description: "Build" },
      { from: "building", to: "shipped", by: ["agent"], description: "Ship" },
    ],
    fromAnyNonTerminal: [{ to: "dropped", by: ["agent", "user"], description: "Drop" }],
    rejections: [],
  };
}

test.describe("the workflows registry", () => {
  test("lists every workflow with its versions newest first, the current one marked, who published each and its tasks", async ({
    page,
  }) => {
    test.setTimeout(120_000);
    await signIn(page, "engineer", "/workflows");
    const workflows = new WorkflowsPage(page);
    await expect(page.getByRole("heading", { level: 1, name: "Workflows" })).toBeVisible();
    // Every shipped version stays listed: tasks pinned to an old digest still run under it.
    for (const [title, name] of [
      ["Agent task", "agent-task"],
      ["Delivery", "delivery"],
    ] as const) {
      const versions = workflows
        .versions(name)
        .getByRole("listitem")
        .filter({ has: page.getByRole("link", { name: /^v\d+$/ }) });
      await expect(versions.first().getByRole("link", { name: "v2", exact: true })).toBeVisible();
      await expect(versions.nth(1).getByRole("link", { name: "v1", exact: true })).toBeVisible();
      await expect(versions.first()).toContainText("current");
      await expect(versions.nth(1)).not.toContainText("current");
      await expect(versions.first()).toContainText("shipped with Verity");
      await expect(versions.first()).toContainText("sha256:");
      await expect(workflows.entry(title).getByText("New tasks get")).toContainText("v2");
    }
    // The demo's refund runs are agent-task v2 tasks: a count, linking to the task list filtered to the workflow.
    const agentTaskV2 = workflows.versions("agent-task").getByRole("listitem").first();
    const tasks = agentTaskV2.getByRole("link", { name: /^\d+ tasks?$/ });
    await expect(tasks).toHaveAttribute("href", "/tasks?workflow=agent-task");
    // The full digest is a hover away (and on the clipboard).
    await expect(agentTaskV2.locator("code[title^='sha256:']")).toHaveAttribute("title", /^sha256:[0-9a-f]{64}$/);
    await expect(agentTaskV2.getByRole("button", { name: "Copy the digest of agent-task v2" })).toBeVisible();
    await workflows.checkAtBothWidths("workflows", async () => {
      await expect(workflows.versions("delivery")).toBeVisible();
    });
  });

  test("a version shows each state with its transitions, who may take them, its gates and its rejections", async ({
    page,
  }) => {
    test.setTimeout(120_000);
    await signIn(page, "engineer", "/workflows");
    const workflows = new WorkflowsPage(page);
    await workflows.versions("agent-task").getByRole("link", { name: "v1", exact: true }).click();
    await page.waitForURL("**/workflows/agent-task/1");
    await expect(page.getByRole("heading", { level: 1 })).toContainText("Agent task");
    await expect(page.getByRole("heading", { level: 1 })).toContainText("superseded");
    await expect(page.getByText("New tasks get")).toContainText("v2");
    await expect(workflows.states("agent-task v1").getByRole("listitem").first()).toContainText("RECEIVED");
    // A person resolves an escalation; in v1 Verity itself may not (v2 added that).
    await expect(workflows.edge("WAITING_FOR_HUMAN", "HUMAN_RESOLVED")).toContainText("person");
    await expect(workflows.edge("WAITING_FOR_HUMAN", "HUMAN_RESOLVED")).not.toContainText("system");
    await expect(workflows.edge("VALIDATING", "COMPLETED")).toContainText("every mandatory subtask completed");
    await expect(workflows.edge("any active state", "CANCELLED")).toContainText("Cancel");
    await expect(page.getByRole("list", { name: "Transitions refused on purpose in agent-task v1" })).toContainText(
      "completion_requires_validation",
    );
    await expect(page.getByText(/sha256:[0-9a-f]{64}/)).toBeVisible();
    // The diagram at a wide screen, the list alone on a phone (where a diagram would be illegible).
    await workflows.checkAtBothWidths("workflow-version", async () => {
      await expect(workflows.state("VALIDATING")).toBeVisible();
    });
    await page.setViewportSize({ width: 1440, height: 900 });
    await expect(page.getByRole("img", { name: "State machine of agent-task v1" })).toBeVisible();
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(page.getByRole("img", { name: "State machine of agent-task v1" })).toBeHidden();

    // Delivery: who sets each gate, and the v1 tasks that follow v2's rule about it.
    await page.goto("/workflows/delivery/2");
    await expect(workflows.gate("delivery v2", "deployment_approved")).toContainText(
      "operator or admin, not whoever set security_approved",
    );
    await expect(workflows.gate("delivery v2", "plan_approved")).toContainText("whoever may move the task");
    await page.goto("/workflows/delivery/1");
    await expect(workflows.gate("delivery v1", "security_approved")).toContainText("its tasks follow v2's rule");
  });

  test("a comparison says what a version changed, and two versions can be picked", async ({ page }) => {
    test.setTimeout(120_000);
    await signIn(page, "auditor", "/workflows");
    const workflows = new WorkflowsPage(page);
    // An auditor reads the registry but is offered no migration.
    await expect(page.getByRole("link", { name: /Plan moving/ })).toHaveCount(0);
    await workflows.versions("agent-task").getByRole("link", { name: "What changed since v1" }).click();
    await page.waitForURL("**/workflows/agent-task/compare?from=1&to=2");
    await expect(page.getByRole("heading", { level: 2, name: "6 changes from v1 to v2" })).toBeVisible();
    const edges = page.getByRole("region", { name: "Transitions" });
    await expect(edges.getByRole("listitem").filter({ hasText: "WAITING_FOR_TOOL → RECONCILING" })).toContainText(
      "added",
    );
    await expect(edges.getByRole("listitem").filter({ hasText: "any active state → CANCELLED" })).toContainText(
      "now also taken by Verity itself",
    );
    await workflows.checkAtBothWidths("workflow-compare", async () => {
      await expect(edges).toBeVisible();
    });

    // The default without a choice: the newest against the one before it; then pick the other way round.
    await page.goto("/workflows/delivery/compare");
    await expect(page.getByRole("heading", { level: 2, name: "2 changes from v1 to v2" })).toBeVisible();
    await expect(page.getByRole("region", { name: "Who sets the gates" })).toContainText("deployment_approved");
    await page.getByLabel("Older").selectOption("2");
    await page.getByLabel("Newer").selectOption("1");
    await page.getByRole("button", { name: "Compare" }).click();
    await page.waitForURL("**/workflows/delivery/compare?from=2&to=1");
    await expect(page.getByRole("region", { name: "Who sets the gates" }).getByRole("listitem").first()).toContainText(
      "removed",
    );

    // A version that is not there is said in words, with the choice kept.
    await page.goto("/workflows/delivery/compare?from=9&to=2");
    await expect(page.getByRole("alert").filter({ hasText: "not a version" })).toHaveText(
      "9 is not a version of delivery; it has v2, v1.",
    );
    await expect(page.getByLabel("Older")).toBeVisible();
    expect(await axeViolations(page)).toEqual([]);
  });

  test("a workflow or version that does not exist is a page that says so", async ({ page }) => {
    await signIn(page, "operator", "/workflows/no-such-workflow/1");
    await expect(page.getByRole("heading", { level: 1, name: "No such workflow version" })).toBeVisible();
    await page.goto("/workflows/delivery/99");
    await expect(page.getByRole("heading", { level: 1, name: "No such workflow version" })).toBeVisible();
  });

  test("moving tasks is an engineer's: an operator is told why not", async ({ page }) => {
    await signIn(page, "operator", "/workflows/delivery/migrate");
    await expect(page.getByText("does not include the workflows:migrate permission")).toBeVisible();
    await expect(page.getByRole("form", { name: "State mapping" })).toHaveCount(0);
  });

  test("an engineer plans a move between versions: the mapping defaults to same-named states, the plan says what it would do", async ({
    page,
  }) => {
    test.setTimeout(120_000);
    await signIn(page, "engineer", "/workflows/delivery/migrate");
    const workflows = new WorkflowsPage(page);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Move delivery tasks from v1 to v2");
    const mapping = page.getByRole("form", { name: "State mapping" });
    // Every active state of v1 maps to its namesake in v2; finished tasks are never moved.
    for (const state of ["planning", "implementing", "reviewing", "testing"])
      await expect(mapping.getByLabel(state, { exact: true })).toHaveValue(state);
    await expect(mapping.getByLabel("complete", { exact: true })).toHaveCount(0);
    await mapping.getByRole("button", { name: "Plan the move" }).click();
    // The demo's delivery runs are all on v2: the dry run finds nothing on v1 to move, and says so.
    const plan = page.getByRole("region", { name: /^Plan: 0 of 0 tasks can move/ });
    await expect(plan).toContainText("No active task is on v1");
    await expect(page.getByRole("form", { name: "Apply the plan" })).toHaveCount(0);
    // Changing the mapping after planning is flagged before anything could be applied.
    await mapping.getByLabel("testing", { exact: true }).selectOption("reviewing");
    await expect(plan).toContainText("The mapping changed since this plan was made");
    await workflows.checkAtBothWidths("workflow-migrate", async () => {
      await expect(mapping).toBeVisible();
    });
    // Moving backwards is refused in words, with the choice of versions kept.
    await page.goto("/workflows/delivery/migrate?from=2&to=1");
    await expect(page.getByRole("alert").filter({ hasText: "Tasks move only" })).toContainText(
      "v1 is not newer than v2",
    );
    await expect(page.getByLabel("Tasks on")).toHaveValue("2");
  });

  test("an engineer moves a published workflow's running tasks to its newer version: a plan per task, a refusal in words, a stale one refused, the rest moved", async ({
    page,
    browser,
    playwright,
    baseURL,
  }) => {
    test.setTimeout(180_000);
    const name = `ship-${runId}`;
    const admin = await signedInRequest(playwright, baseURL, "admin");
    const adminPage = await browser.newPage();
    const driver = new TaskDriver(admin, await everyWorkflowToken(adminPage, `ship-bot-${runId}`));
    await adminPage.close();
    await publish(admin, shipTrain(1));
    const waiting = await driver.create(name, `ship-${runId}-a`);
    const overtaken = await driver.create(name, `ship-${runId}-b`);
    const building = await driver.move(await driver.create(name, `ship-${runId}-c`), "building");
    await publish(admin, shipTrain(2));

    await signIn(page, "engineer", "/workflows");
    const workflows = new WorkflowsPage(page);
    await expect(workflows.versions(name).getByRole("listitem").nth(1)).toContainText("3 tasks");
    await workflows.entry(`Ship train ${name}`).getByRole("link", { name: "Plan moving them to v2" }).click();
    await page.waitForURL(`**/workflows/${name}/migrate?from=1&to=2`);
    const mapping = page.getByRole("form", { name: "State mapping" });
    await expect(mapping.getByLabel("building", { exact: true })).toHaveValue("building");
    await mapping.getByRole("button", { name: "Plan the move" }).click();

    const plan = page.getByRole("region", { name: "Plan: 2 of 3 tasks can move" });
    const item = (id: string) =>
      plan.getByRole("listitem").filter({ has: page.getByRole("link", { name: id, exact: true }) });
    await expect(item(waiting.id)).toContainText("planning → planning");
    await expect(item(waiting.id)).toContainText("Can move");
    // v2 requires the review's approval in building: that task would break it, and the plan says so.
    await expect(item(building.id)).toContainText("Refused");
    await expect(item(building.id)).toContainText("review_passed");
    await workflows.checkAtBothWidths("workflow-migration-plan", async () => {
      await expect(plan).toBeVisible();
    });

    // One planned task moves on before the confirmation: it is refused as stale and keeps its state.
    await driver.move(overtaken, "building");
    const apply = page.getByRole("form", { name: "Apply the plan" });
    await apply.getByRole("button", { name: "Move 2 tasks to v2" }).click();
    await expect(apply.getByRole("alert")).toContainText("Give a reason");
    await apply.getByLabel("Reason (required)").fill("v2 asks for the review before building");
    await apply.getByRole("button", { name: "Move 2 tasks to v2" }).click();
    const result = page.locator(".wf-migration-result");
    await expect(result).toContainText(`Moved 1 of 2 tasks to ${name} v2; 1 refused and left as they were.`);
    await expect(result).toBeFocused();
    const outcome = (id: string) =>
      result.getByRole("listitem").filter({ has: page.getByRole("link", { name: id, exact: true }) });
    await expect(outcome(waiting.id)).toContainText("moved: now on v2 in planning");
    await expect(outcome(overtaken.id)).toContainText("moved since the plan");
    await workflows.checkAtBothWidths("workflow-migration-result", async () => {
      await expect(result).toBeVisible();
    });

    // The registry counts it on v2 now; the refused ones stay on v1.
    await page.goto("/workflows");
    await expect(workflows.versions(name).getByRole("listitem").first()).toContainText("1 task");
    await expect(workflows.versions(name).getByRole("listitem").nth(1)).toContainText("2 tasks");
    await admin.dispose();
  });
});
