import { expect, test, type Page } from "@playwright/test";
import { createRunningTask } from "../pages/agent-seed";
import { LoginPage, signIn } from "../pages/login-page";
import { demoAgent } from "@/lib/config/demo-accounts";

/**
 * The console under its nonce-based Content-Security-Policy (proxy.ts): every
 * main page renders, hydrates and works with no violation reported, and
 * every response, pages and API alike, carries the security headers.
 */

interface Violations {
  events: string[];
  console: string[];
}

/** Collects CSP violations from the page's own `securitypolicyviolation` events and from the console. */
async function watchViolations(page: Page): Promise<Violations> {
  const seen: Violations = { events: [], console: [] };
  await page.exposeFunction("__reportCspViolation", (text: string) => seen.events.push(text));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      (window as unknown as { __reportCspViolation: (t: string) => void }).__reportCspViolation(
        `${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`,
      );
    });
  });
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to (execute|load|apply)/i.test(message.text()))
      seen.console.push(message.text());
  });
  return seen;
}

function expectSecurityHeaders(headers: Record<string, string>, where: string): void {
  expect(headers["content-security-policy"], where).toContain("frame-ancestors 'none'");
  expect(headers["x-content-type-options"], where).toBe("nosniff");
  expect(headers["referrer-policy"], where).toBe("strict-origin-when-cross-origin");
  expect(headers["permissions-policy"], where).toContain("camera=()");
  expect(headers["x-frame-options"], where).toBe("DENY");
}

test("the main console pages work under the CSP with no violation reported", async ({ page, request }) => {
  test.setTimeout(120_000);
  const task = await createRunningTask(request);
  const violations = await watchViolations(page);

  const login = await page.goto("/login");
  const loginHeaders = login!.headers();
  expectSecurityHeaders(loginHeaders, "/login");
  const nonce = /'nonce-([^']+)'/.exec(loginHeaders["content-security-policy"] ?? "")?.[1];
  expect(nonce, "the page's CSP carries a nonce").toBeTruthy();
  // Next.js put this request's nonce on its scripts: hydration ran, the form is live.
  expect(await page.locator(`script[nonce]`).count()).toBeGreaterThan(0);
  await new LoginPage(page).fill("admin", "wrong-password");
  await expect(new LoginPage(page).error).toBeVisible();

  await signIn(page, "admin", "/tasks");
  const pages = [
    "/tasks",
    `/tasks/${encodeURIComponent(task.id)}`,
    `/tasks/${encodeURIComponent(task.id)}/checkpoints`,
    "/reviews",
    "/audit",
    "/dashboard",
  ];
  const nonces = new Set<string>([nonce!]);
  for (const path of pages) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(200);
    const headers = res!.headers();
    expectSecurityHeaders(headers, path);
    nonces.add(/'nonce-([^']+)'/.exec(headers["content-security-policy"] ?? "")?.[1] ?? "");
    await expect(page.getByRole("heading", { level: 1 }).first(), path).toBeVisible();
    // Hydrated: a client-side navigation control answers (the header's sign-out button is a client component).
    await expect(page.getByRole("button", { name: "Sign out" })).toBeEnabled();
    await page.waitForLoadState("networkidle");
  }
  // A client-side navigation (the router fetches the next page, loads its chunks) under the same policy.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Tasks" }).click();
  await expect(page).toHaveURL((url) => url.pathname === "/tasks");
  await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
  // A fresh nonce per request.
  expect(nonces.size).toBe(pages.length + 1);
  expect(violations).toEqual({ events: [], console: [] });
});

test("API responses carry the security headers too, and HTTPS ones HSTS", async ({ request }) => {
  const health = await request.get("/api/health");
  expectSecurityHeaders(health.headers(), "/api/health");
  expect(health.headers()["content-security-policy"]).toContain("default-src 'none'");
  expect(health.headers()["strict-transport-security"]).toBeUndefined();

  const problem = await request.get("/api/v1/tasks");
  expect(problem.status()).toBe(401);
  expectSecurityHeaders(problem.headers(), "/api/v1/tasks");

  const behindTls = await request.get("/api/health", { headers: { "X-Forwarded-Proto": "https" } });
  expect(behindTls.headers()["strict-transport-security"]).toBe("max-age=31536000");
});

test("an agent's API request, which the server's own router answers, carries what Next's answers carry; a console session still reaches the API through Next", async ({
  page,
  request,
}) => {
  const task = await createRunningTask(request);
  const path = `/api/v1/tasks/${encodeURIComponent(task.id)}/checkpoints`;
  // Bearer: lib/adapters/http/api-router.ts answers (scripts/serve.mjs). Session: Next's route and proxy.ts.
  const byAgent = await request.get(path, { headers: { Authorization: `Bearer ${demoAgent.token}` } });
  expect(byAgent.status(), await byAgent.text()).toBe(200);
  await signIn(page, "engineer", "/tasks");
  const byPerson = await page.request.get(path);
  expect(byPerson.status(), await byPerson.text()).toBe(200);
  for (const name of [
    "content-type",
    "cache-control",
    "content-security-policy",
    "x-content-type-options",
    "referrer-policy",
    "permissions-policy",
    "x-frame-options",
    "cross-origin-opener-policy",
  ])
    expect(byAgent.headers()[name], name).toBe(byPerson.headers()[name]);
  expectSecurityHeaders(byAgent.headers(), `${path} (bearer)`);
  expect(byAgent.headers()["strict-transport-security"]).toBeUndefined();
  const behindTls = await request.get(path, {
    headers: { Authorization: `Bearer ${demoAgent.token}`, "X-Forwarded-Proto": "https" },
  });
  expect(behindTls.headers()["strict-transport-security"]).toBe("max-age=31536000");
});
