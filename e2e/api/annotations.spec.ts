import { expect, test, type APIRequestContext } from "@playwright/test";
import { demoObserver } from "@/lib/config/demo-accounts";
import { createRunningTask } from "../pages/agent-seed";
import { signIn } from "../pages/login-page";
import { authHeaders, expectProblem, fieldsOf } from "./agent-api";

/**
 * POST /api/v1/audit/entries/{id}/annotations over real HTTP: a person's
 * correction (the console session of an auditor, as a script in the
 * console's origin would send it), refused for the refund agent (its role
 * lacks audit:annotate) and for the read-only observer agent (an auditor
 * role, but not a person); bad input named as problem+json; the annotation
 * joins the entry's chain and the task's export.
 */

interface Entry {
  id: string;
  stream: string;
  seq: number;
  action: string;
  actor: string;
  hash: string;
  details: Record<string, unknown>;
}

let observer: APIRequestContext;
test.beforeAll(async ({ playwright, baseURL }) => {
  observer = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${demoObserver.token}` },
  });
});
test.afterAll(async () => observer?.dispose());

async function creationOf(taskId: string): Promise<Entry> {
  const res = await observer.get(`/api/v1/audit/entries?task=${encodeURIComponent(taskId)}&action=task.created`);
  expect(res.status(), await res.text()).toBe(200);
  const [entry] = ((await res.json()) as { items: Entry[] }).items;
  expect(entry).toBeDefined();
  return entry!;
}

test("agents are refused; a person's bad input is named; an annotation joins the chain and the export", async ({
  page,
  request,
  baseURL,
}) => {
  const task = await createRunningTask(request);
  const created = await creationOf(task.id);
  const url = `/api/v1/audit/entries/${created.id}/annotations`;

  // The refund agent's role has no audit:annotate; the observer's auditor role has, but it is an agent.
  const denied = await expectProblem(
    await request.post(url, { headers: authHeaders, data: { note: "I meant another order" } }),
    403,
    "forbidden",
  );
  expect(denied.detail).toContain("audit:annotate");
  const notAPerson = await expectProblem(await observer.post(url, { data: { note: "x" } }), 403, "forbidden");
  expect(notAPerson.detail).toContain("people's corrections");

  await signIn(page, "auditor");
  const asAuditor = (path: string, data: unknown) =>
    page.request.post(path, { data, headers: { Origin: baseURL ?? "" } });

  const blank = await expectProblem(await asAuditor(url, { note: "   " }), 400, "validation-failed");
  expect(fieldsOf(blank)).toEqual(["note"]);
  const unknownField = await expectProblem(
    await asAuditor(url, { note: "x", entry_id: "other" }),
    400,
    "validation-failed",
  );
  expect(unknownField.detail).toContain("entry_id");
  const missing = await expectProblem(
    await asAuditor("/api/v1/audit/entries/aud_no_such_entry/annotations", { note: "x" }),
    404,
    "not-found",
  );
  expect(fieldsOf(missing)).toEqual(["entry_id"]);

  const res = await asAuditor(url, {
    note: "The intent named the wrong order",
    correction: { intent_id: "refund-order-43" },
  });
  expect(res.status(), await res.text()).toBe(201);
  const annotation = (await res.json()) as Entry;
  expect(annotation).toMatchObject({
    action: "annotation.added",
    stream: created.stream,
    seq: expect.any(Number),
    actor: "spiffe://verity.local/user/auditor",
    details: {
      annotates: { id: created.id, stream: created.stream, seq: created.seq, hash: created.hash },
      note: "The intent named the wrong order",
      correction: { intent_id: "refund-order-43" },
    },
  });

  // Exported with the task's entries (and the chain still verifies).
  const exported = await observer.get(`/api/v1/audit/export?format=jsonl&task=${encodeURIComponent(task.id)}`);
  expect(exported.status()).toBe(200);
  const lines = (await exported.text())
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Entry);
  expect(lines.find((l) => l.id === annotation.id)).toMatchObject({ action: "annotation.added" });
  const verified = await observer.get("/api/v1/audit/verify");
  expect(await verified.json()).toMatchObject({ ok: true });
});
