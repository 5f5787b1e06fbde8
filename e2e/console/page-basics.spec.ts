import { expect, test } from "@playwright/test";
import { createRunningTask } from "../pages/agent-seed";
import { axeViolations } from "../pages/axe";
import { signIn } from "../pages/login-page";

/**
 * What every page owes a person before its content: its own h1 (a not-found
 * and a forbidden page included), the console's icon rather than a 404 on
 * every load, no axe violation on the task list's status chips, whose
 * accessible names now begin with what they show, and times in one format.
 */
test("not-found and forbidden pages have an h1; the icons load; the task list's chips pass axe", async ({
  page,
  request,
}) => {
  await signIn(page, "auditor", "/tasks");
  await expect(page.getByRole("heading", { level: 1 })).toHaveCount(1);
  // A status chip (the first link of each workflow is its total).
  const chip = page.getByRole("region", { name: "Tasks by status" }).locator('a[href*="status="]').first();
  await expect(chip).toHaveAccessibleName(/^[A-Z_]+ \d[\d,]* \S+ tasks?$/);
  expect(await axeViolations(page)).toEqual([]);
  // A task an agent creates now updates the list; the live label's time is in the lists' own format: UTC, 24-hour.
  await createRunningTask(request);
  await expect(page.getByRole("status").filter({ hasText: /^Live/ }).first()).toHaveText(
    /^Live · updated \d{2}:\d{2}:\d{2} UTC$/,
    { timeout: 30_000 },
  );

  for (const [path, heading] of [
    ["/no-such-page", "Page not found"],
    ["/tasks/no-such-task", "No such task"],
    ["/alerts/no-such-alert", "Page not found"],
    ["/admin/people", "You cannot open this page"],
  ] as const) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(heading);
    // One main landmark: a console page's not-found is drawn inside the shell's <main>, not as a second one.
    await expect(page.getByRole("main")).toHaveCount(1);
    expect(await axeViolations(page), path).toEqual([]);
  }

  const icons = await page.locator('link[rel="icon"], link[rel="apple-touch-icon"], link[rel="manifest"]').all();
  const hrefs = await Promise.all(icons.map((l) => l.getAttribute("href")));
  expect(hrefs).toEqual(
    expect.arrayContaining(["/favicon.svg", "/favicon-32.png", "/apple-touch-icon.png", "/manifest.webmanifest"]),
  );
  for (const href of hrefs) {
    const res = await request.get(href!);
    expect(res.status(), href!).toBe(200);
  }
  const svg = await request.get("/favicon.svg");
  expect(svg.headers()["content-type"]).toContain("image/svg+xml");
});
