import { describe, expect, it, vi } from "vitest";
import { VerityClient } from "@/sdk";
import { runLookupWorker } from "@/sdk/lookup-worker";

/**
 * The worker loop's own contract, over the SDK's real HTTP code with a
 * scripted server (the real server and release service are in
 * e2e/console/delivery.spec.ts): a claimed lookup is answered under its
 * fencing token whether or not the caller listens for answers.
 */
function scriptedServer() {
  const answers: Array<{ url: string; body: Record<string, unknown> }> = [];
  let claims = 0;
  const lookup = {
    id: "lookup:exec_1.1",
    tool: "deploy.release",
    tool_version: 1,
    idempotency_key: "vrt:task-1:release",
    execution_id: "exec_1",
    task_id: "task-1",
    request: { service: "checkout" },
    status: "CLAIMED",
    fencing_token: 3,
    claimed_by: "spiffe://verity.local/agent/w",
    lease_expires_at: new Date().toISOString(),
    deadline_at: new Date().toISOString(),
    answer: null,
  };
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = String(input);
    if (url.endsWith("/lookups/claim"))
      return ++claims === 1 ? Response.json(lookup) : new Response(null, { status: 204 });
    answers.push({ url, body: JSON.parse(String(init?.body)) as Record<string, unknown> });
    return Response.json({ lookup: { ...lookup, status: "ANSWERED" }, reconciled: null });
  };
  return { fetchImpl: fetchImpl as typeof fetch, answers };
}

describe("runLookupWorker", () => {
  it("answers what it claimed, under the claim's fencing token, with no onAnswered listener", async () => {
    const server = scriptedServer();
    const client = new VerityClient({ baseUrl: "http://verity.test", token: "t", fetch: server.fetchImpl });
    const stop = new AbortController();
    const worker = runLookupWorker({
      client,
      tool: "deploy.release",
      signal: stop.signal,
      pollIntervalMs: 5,
      lookup: async (q) => ({ result: "found", record: { id: "rel_1", idempotency_key: q.idempotency_key } }),
    });
    await vi.waitFor(() => expect(server.answers.length).toBeGreaterThan(0), { timeout: 5_000, interval: 5 });
    stop.abort();
    await worker;
    expect(server.answers).toEqual([
      {
        url: "http://verity.test/api/v1/lookups/lookup%3Aexec_1.1/answer",
        body: { result: "found", record: { id: "rel_1", idempotency_key: "vrt:task-1:release" }, fencing_token: 3 },
      },
    ]);
  });
});
