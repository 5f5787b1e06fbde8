import { expect, test, type APIRequestContext, type APIResponse } from "@playwright/test";
import { AgentsPage } from "../pages/agents-page";
import { axeViolations } from "../pages/axe";
import { signIn } from "../pages/login-page";
import { captureServerAction, replayServerAction } from "../pages/server-action";

/**
 * /admin/agents (issue 11, "Agents"): an admin provisions an agent in the
 * browser and the token it was shown once is the one the API honours, within
 * its scopes; revoking and rotating there change what the API answers on the
 * very next request. Agents are new per test (names carry the run's time).
 */
test.use({ permissions: ["clipboard-read", "clipboard-write"] });
const dir = "test-results/console-screenshots";

let counter = 0;
function agentName(what: string): string {
  counter += 1;
  return `e2e-${what}-${Date.now().toString(36)}-${counter}`;
}

function bearer(token: string) {
  return { Authorization: `Bearer ${token}` };
}

async function createTaskAs(
  request: APIRequestContext,
  token: string,
  workflow: "agent-task" | "delivery",
): Promise<APIResponse> {
  const id = `${workflow}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
  return request.post("/api/v1/tasks", {
    headers: bearer(token),
    data: {
      workflow,
      task_id: id,
      intent_id: `intent-${id}`,
      subtasks: workflow === "agent-task" ? [{ id: "refund", title: "Issue refund", mandatory: true }] : undefined,
    },
  });
}

async function listTasksAs(request: APIRequestContext, token: string): Promise<number> {
  return (await request.get("/api/v1/tasks?limit=1", { headers: bearer(token) })).status();
}

async function expectProblem(response: APIResponse, status: number, words: string | RegExp): Promise<void> {
  expect(response.status(), await response.text()).toBe(status);
  expect(response.headers()["content-type"]).toContain("application/problem+json");
  expect(((await response.json()) as { detail?: string }).detail).toMatch(words);
}

test.describe("agents", () => {
  test("an admin creates an agent scoped to one workflow; the token copied once drives it over /api/v1 and is refused another", async ({
    page,
    request,
  }) => {
    test.setTimeout(180_000);
    const name = agentName("scoped");
    await signIn(page, "admin", "/admin/agents");
    const agents = new AgentsPage(page);
    await expect(agents.heading).toBeVisible();
    // The link sits beside People, for admins, under the header's Admin menu.
    const mainNav = page.getByRole("navigation", { name: "Main" });
    await mainNav.getByRole("button", { name: "Admin" }).click();
    await expect(mainNav.getByRole("link")).toContainText(["People", "Agents"]);
    await page.keyboard.press("Escape");

    const shown = await agents.create({
      name,
      workflows: ["agent-task"],
      tools: ["crm.add_note"],
      expiresIn: "30 days",
    });
    expect(shown.secret).toMatch(/^vrt_/);
    await expect(agents.createForm.getByRole("status").first()).toContainText(
      `spiffe://verity.local/agent/${name} is created`,
    );
    const copied = await agents.copyShownToken(agents.createForm);
    expect(copied).toBe(shown.secret);
    expect(await axeViolations(page)).toEqual([]);

    const created = await createTaskAs(request, copied, "agent-task");
    expect(created.status(), await created.text()).toBe(201);
    expect(((await created.json()) as { created_by: string }).created_by).toBe(`spiffe://verity.local/agent/${name}`);
    await expectProblem(await createTaskAs(request, copied, "delivery"), 403, /workflow delivery/);

    // Listed with its scopes and its use; the secret is never on the page again.
    await page.reload();
    const card = agents.agent(name);
    await expect(card).toContainText(`spiffe://verity.local/agent/${name}`);
    const token = agents.token(shown.id);
    await expect(token).toHaveAttribute("data-state", "live");
    await expect(token).toContainText(shown.secret.slice(0, 8));
    await expect(token).toContainText("agent-task");
    await expect(token).toContainText("crm.add_note");
    await expect(token.locator("dt", { hasText: "Last used" }).locator("+ dd")).not.toHaveText("never");
    expect(await page.content()).not.toContain(shown.secret);
    expect(await axeViolations(page)).toEqual([]);
  });

  test("rotate: both tokens work in the overlap, one rotated with none stops at once and shows as expired; revoke: the next request is a 401", async ({
    page,
    request,
  }) => {
    test.setTimeout(180_000);
    const name = agentName("rotating");
    await signIn(page, "admin", "/admin/agents");
    const agents = new AgentsPage(page);
    const first = await agents.create({ name, workflows: ["agent-task", "delivery"], tools: [] });
    expect(await listTasksAs(request, first.secret)).toBe(200);

    const second = await agents.rotate(first.id, "1 hour");
    expect(second.id).not.toBe(first.id);
    await expect(agents.token(first.id).getByRole("status").first()).toContainText(
      /The old token vrt_.{4}… keeps working until .+ UTC, then stops\./,
    );
    expect(await listTasksAs(request, first.secret)).toBe(200);
    expect(await listTasksAs(request, second.secret)).toBe(200);
    await expect(agents.token(second.id)).toHaveAttribute("data-state", "live");
    await expect(agents.agent(name)).toContainText("2 of 2 tokens live");

    // Revoke asks first; keeping it changes nothing.
    const confirm = await agents.startRevoke(second.id);
    await expect(confirm.getByRole("button", { name: "Revoke token" })).toBeFocused();
    await confirm.getByRole("button", { name: "Keep it" }).click();
    await expect(agents.token(second.id).getByRole("button", { name: "Revoke…" })).toBeFocused();
    expect(await listTasksAs(request, second.secret)).toBe(200);

    await agents.revoke(second.id);
    await expectProblem(
      await request.get("/api/v1/tasks", { headers: bearer(second.secret) }),
      401,
      /unknown or revoked/,
    );
    await expect(agents.token(second.id)).toHaveAttribute("data-state", "revoked");
    // The other one is still in its overlap.
    expect(await listTasksAs(request, first.secret)).toBe(200);

    const third = await agents.rotate(first.id, "none: stops at once");
    expect(await listTasksAs(request, first.secret)).toBe(401);
    expect(await listTasksAs(request, third.secret)).toBe(200);
    await page.reload();
    await expect(agents.token(first.id)).toHaveAttribute("data-state", "expired");
    await expect(agents.token(first.id).locator(".badge")).toHaveText("expired");
    await expect(agents.token(second.id).locator(".badge")).toHaveText("revoked");
    await expect(agents.agent(name)).toContainText("1 of 3 tokens live");
    // A token that no longer works offers no controls.
    await expect(agents.token(first.id).getByRole("button")).toHaveCount(0);
    expect(await axeViolations(page)).toEqual([]);
  });

  test("an operator is refused the page and, posting the admin's actions by hand, changes nothing", async ({
    page,
    browser,
    request,
  }) => {
    test.setTimeout(180_000);
    await signIn(page, "admin", "/admin/agents");
    const agents = new AgentsPage(page);
    const target = await agents.create({ name: agentName("target"), workflows: ["agent-task"], tools: [] });
    await page.reload();
    // Real requests built by the admin's browser, stopped before they reach the server.
    const name = agentName("never");
    await agents.fillCreate({ name, workflows: ["agent-task"], tools: [] });
    const create = await captureServerAction(page, () => agents.submitCreate());
    await page.reload();
    const confirm = await agents.startRevoke(target.id);
    const revoke = await captureServerAction(page, () => confirm.getByRole("button", { name: "Revoke token" }).click());

    const theirs = await browser.newContext();
    try {
      const operator = await theirs.newPage();
      await signIn(operator, "operator", "/admin/agents");
      await expect(operator.getByRole("alert").filter({ hasText: "You cannot open this page" })).toContainText(
        "Your role (operator) does not include the agents:manage permission.",
      );
      await expect(operator.getByRole("link", { name: "Agents" })).toHaveCount(0);
      await expect(operator.getByRole("form", { name: "Create an agent" })).toHaveCount(0);

      for (const action of [create, revoke]) {
        const response = await replayServerAction(operator.request, action);
        expect(response.ok()).toBe(true);
        expect(await response.text()).toContain(
          "Not allowed: The operator role does not have the agents:manage permission. Nothing was changed.",
        );
      }
    } finally {
      await theirs.close();
    }
    expect(await listTasksAs(request, target.secret)).toBe(200);
    await page.reload();
    await expect(agents.agent(name)).toHaveCount(0);
    await expect(agents.token(target.id)).toHaveAttribute("data-state", "live");
  });

  test("screenshots at 390 px and 1440 px", async ({ page }) => {
    test.setTimeout(180_000);
    await signIn(page, "admin", "/admin/agents");
    const agents = new AgentsPage(page);
    const name = agentName("pictured");
    const shown = await agents.create({ name, workflows: ["agent-task"], tools: ["payments.refund"] });
    // Nothing wider than the screen: the page never scrolls sideways, on a phone or a wide screen.
    const pageWidth = () => page.evaluate(() => document.documentElement.scrollWidth);
    for (const width of [390, 1440]) {
      await page.setViewportSize({ width, height: 900 });
      await expect(agents.createForm.locator(".token-once")).toBeVisible();
      expect(await pageWidth()).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `${dir}/agents-created-${width}.png`, fullPage: true });
      await agents.createForm.screenshot({ path: `${dir}/agents-create-form-${width}.png` });
    }
    await page.reload();
    await agents.startRevoke(shown.id);
    for (const width of [390, 1440]) {
      await page.setViewportSize({ width, height: 900 });
      await expect(agents.agent(name)).toBeVisible();
      expect(await pageWidth()).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `${dir}/agents-${width}.png`, fullPage: true });
      await agents.agent(name).screenshot({ path: `${dir}/agents-card-${width}.png` });
    }
  });
  test("an admin (who holds data:restricted) lets an agent read restricted fields with the checkbox; its card says so", async ({
    page,
  }) => {
    const name = agentName("replayer");
    await signIn(page, "admin", "/admin/agents");
    const agents = new AgentsPage(page);
    await expect(agents.createForm.getByLabel("May read restricted fields unmasked")).toBeVisible();
    expect(await axeViolations(page)).toEqual([]);
    const shown = await agents.create({ name, workflows: ["agent-task"], tools: [], readRestricted: true });
    await expect(agents.createForm.getByRole("status").first()).toContainText(`agent/${name} is created`);
    await page.reload();
    const token = agents.token(shown.id);
    await expect(token.locator("dt", { hasText: "Read restricted fields" }).locator("+ dd")).toHaveText("yes");
    expect(await axeViolations(page)).toEqual([]);
  });
});
