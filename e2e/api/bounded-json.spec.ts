import { expect, test } from "@playwright/test";
import { authHeaders, expectProblem, fieldsOf } from "./agent-api";

/**
 * Issue 11's reproductions over HTTP: free-form JSON nested far deeper than
 * any field allows is a 400 naming the field, never a 500 or an 18 MB page.
 */
test.use({ extraHTTPHeaders: authHeaders });

function nestedText(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

test("an event payload nested 8,000 deep is a 400 naming payload, not a 500", async ({ request }) => {
  const body = `{"event_id":"deep-${Date.now()}","source":"crm","type":"note.created","payload":${nestedText(8000)}}`;
  const res = await request.post("/api/v1/events", {
    data: Buffer.from(body),
    headers: { "Content-Type": "application/json" },
  });
  const problem = await expectProblem(res, 400, "validation-failed");
  expect(fieldsOf(problem)).toEqual(["payload"]);
});

test("evidence of 9 KB nested 1,500 deep is a 400 naming evidence; 40 deep is refused by the field's own bound", async ({
  request,
}) => {
  const deep = `{"attempt_id":"x.1","outcome":"succeeded","evidence":${nestedText(1500)}}`;
  expect(deep.length).toBeLessThan(10_000);
  const res = await request.post("/api/v1/executions/exec_does_not_matter/outcome", {
    data: Buffer.from(deep),
    headers: { "Content-Type": "application/json" },
  });
  expect(fieldsOf(await expectProblem(res, 400, "validation-failed"))).toEqual(["evidence"]);

  const event = await request.post("/api/v1/events", {
    data: {
      event_id: `deep40-${Date.now()}`,
      source: "crm",
      type: "note.created",
      payload: JSON.parse(nestedText(40)),
    },
  });
  const problem = await expectProblem(event, 400, "validation-failed");
  expect(problem.errors).toEqual([{ field: "payload", message: "nests deeper than 32 levels" }]);
});
