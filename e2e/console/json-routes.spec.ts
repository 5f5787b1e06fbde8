import { expect, test, type APIResponse } from "@playwright/test";
import { createRunningTask } from "../pages/agent-seed";
import { TaskHistoryPage } from "../pages/audit-page";
import { signIn } from "../pages/login-page";
import { TaskDetailPage } from "../pages/task-detail-page";

/**
 * The console's own JSON routes (/api/console/*) answer every error as RFC
 * 9457 problem+json, as the agent API does, and the pages that poll them say
 * why in words.
 */
const shots = "test-results/json-routes-screenshots";

const consoleRoutes = [
  "/api/console/tasks/latest",
  "/api/console/tasks/any-task/version",
  "/api/console/tasks/any-task/checkpoints",
  "/api/console/tasks/any-task/history",
  "/api/console/tasks/any-task/history/verify",
  "/api/console/alerts/latest",
  "/api/console/alerts/any-alert/version",
  "/api/console/reviews/latest?status=OPEN",
  "/api/console/reviews/any-review/version",
  "/api/console/audit/verify",
  "/api/console/dashboard",
  "/api/console/inbox/count",
];

async function problemOf(response: APIResponse, status: number): Promise<Record<string, unknown>> {
  expect(response.status(), await response.text()).toBe(status);
  expect(response.headers()["content-type"]).toContain("application/problem+json");
  expect(response.headers()["cache-control"]).toBe("no-store");
  const body = (await response.json()) as Record<string, unknown>;
  expect(body.status).toBe(status);
  expect(typeof body.title).toBe("string");
  return body;
}

test("every console JSON route answers a request without a session with a 401 problem", async ({ request }) => {
  for (const route of consoleRoutes) {
    const body = await problemOf(await request.get(route), 401);
    expect(body).toMatchObject({
      type: "https://verity.dev/problems/unauthenticated",
      title: "Authentication required",
      detail: "Your session has ended: sign in again.",
      instance: route.split("?")[0],
    });
  }
});

test("signed in, a refusal, a missing task, bad filters and a wrong method are problems with their extensions", async ({
  page,
  request,
}) => {
  const task = await createRunningTask(request);
  await signIn(page, "operator");
  const api = page.request;

  const ok = await api.get(`/api/console/tasks/${task.id}/version`);
  expect(ok.status()).toBe(200);
  expect(ok.headers()["content-type"]).toContain("application/json");
  expect(await ok.json()).toEqual({ token: "4", version: 4 });

  expect(await problemOf(await api.get("/api/console/audit/verify"), 403)).toMatchObject({
    type: "https://verity.dev/problems/forbidden",
    detail: "Your role (operator) does not include audit:read.",
    permission: "audit:read",
  });
  expect(await problemOf(await api.get("/api/console/tasks/no-such-task/version"), 404)).toMatchObject({
    type: "https://verity.dev/problems/not-found",
    detail: "Task no-such-task does not exist.",
    instance: "/api/console/tasks/no-such-task/version",
  });
  const invalid = await problemOf(
    await api.get(`/api/console/tasks/${task.id}/history?order=sideways&from=yesterday`),
    400,
  );
  expect(invalid.type).toBe("https://verity.dev/problems/validation-failed");
  expect(invalid.errors).toEqual(
    expect.arrayContaining([
      { field: "order", message: expect.stringMatching(/^Order: /) },
      { field: "from", message: "From: must be a date and time, e.g. 2026-11-30T14:00 (UTC)" },
    ]),
  );
  expect(invalid.detail).toContain("From: must be a date and time");
  const cursor = await problemOf(await api.get(`/api/console/tasks/${task.id}/history?cursor=not-a-cursor`), 400);
  expect(cursor.errors).toEqual([{ field: "cursor", message: expect.any(String) }]);

  const post = await api.post("/api/console/tasks/latest");
  expect(await problemOf(post, 405)).toMatchObject({
    type: "https://verity.dev/problems/method-not-allowed",
    detail: "POST is not supported here; use GET.",
  });
  expect(post.headers()["allow"]).toBe("GET");
});

test("the history page names each bad filter in the words of the route's problem", async ({ page, request }) => {
  const task = await createRunningTask(request);
  await signIn(page, "operator");
  const history = new TaskHistoryPage(page);
  await history.goto(task.id, "order=sideways&from=yesterday");
  const notice = page.getByRole("alert").filter({ hasText: "The history cannot be shown with these filters" });
  await expect(notice.locator("li")).toHaveCount(2);
  await expect(notice).toContainText("Order: Invalid option");
  await expect(notice).toContainText("From: must be a date and time, e.g. 2026-11-30T14:00 (UTC)");
  await page.screenshot({ path: `${shots}/history-bad-filters.png`, fullPage: true });
});

test("a task page whose session ended says so in its live status instead of polling on", async ({ page, request }) => {
  const task = await createRunningTask(request);
  await signIn(page, "operator", `/tasks/${task.id}`);
  const detail = new TaskDetailPage(page);
  const live = page.locator("p.live");
  await expect(detail.status).toHaveText("RUNNING");
  await expect(live).toHaveClass(/live--on/);
  // Signing out in another tab: the session's row ends, and the page's stream is closed at once
  // (e2e/console/live-updates.spec.ts); the cookie gone, nothing can be polled either.
  const other = await page.context().newPage();
  await other.goto("/tasks");
  await other.getByRole("button", { name: "Sign out" }).click();
  await other.waitForURL((url) => url.pathname === "/login");
  await expect(live).toHaveText("Live updates stopped: your session ended. Reload to sign in again.");
  await expect(live).toHaveClass(/live--off/);
});
