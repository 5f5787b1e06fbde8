import { expect, test, type APIRequestContext } from "@playwright/test";
import { demoObserver } from "@/lib/config/demo-accounts";
import { AuditSearchPage } from "../pages/audit-page";
import { signIn } from "../pages/login-page";

/**
 * Issue 11: GET /api/v1/audit/export wrote an audit entry and worked from a
 * cross-site link, the Lax session cookie riding along. A session now takes
 * an export only with the console's POST form, from its own origin; a bearer
 * token still uses GET.
 */
const bearer = { Authorization: `Bearer ${demoObserver.token}` };

async function exportsSince(request: APIRequestContext, since: string): Promise<number> {
  const res = await request.get(`/api/v1/audit/entries?action=audit.exported&from=${encodeURIComponent(since)}`, {
    headers: bearer,
  });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { items: unknown[] }).items.length;
}

test("a cross-site link to the export takes nothing and records nothing; the console's button and a bearer GET still export", async ({
  page,
  request,
}) => {
  test.setTimeout(120_000);
  await signIn(page, "auditor", "/audit");
  const since = new Date().toISOString();

  // Another site's page (127.0.0.1 is another site than localhost) links to the export: the browser
  // follows a top-level link with the session cookie (SameSite=Lax).
  const port = new URL(page.url()).port;
  await page.goto(`http://127.0.0.1:${port}/login`);
  await page.setContent(`<a id="lure" href="http://localhost:${port}/api/v1/audit/export?format=csv">Open</a>`);
  const [lured] = await Promise.all([
    page.waitForResponse((r) => r.url().includes("/api/v1/audit/export")),
    page.click("#lure"),
  ]);
  expect(lured.status()).toBe(403);
  expect(lured.headers()["content-disposition"]).toBeUndefined();

  // The same with the session but from a script, and a POST claiming another origin.
  expect((await page.request.get("/api/v1/audit/export?format=csv")).status()).toBe(403);
  const forged = await page.request.post("/api/v1/audit/export", {
    form: { format: "csv" },
    headers: { Origin: "http://evil.example" },
  });
  expect(forged.status()).toBe(403);
  expect(await exportsSince(request, since)).toBe(0);

  // The console's own form posts, and the file comes.
  const audit = new AuditSearchPage(page);
  await audit.goto("action=auth.denied");
  const csv = await audit.download("CSV");
  expect(csv.text.split("\n")[0]).toContain("stream,seq,id");
  expect(await exportsSince(request, since)).toBe(1);

  // Scripts with a token keep GET.
  const scripted = await request.get("/api/v1/audit/export?format=jsonl&action=auth.denied", { headers: bearer });
  expect(scripted.status()).toBe(200);
  expect(await exportsSince(request, since)).toBe(2);
});
