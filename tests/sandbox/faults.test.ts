import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import type { RefundRequest } from "@/lib/connectors/types";
import { get, listRefunds, post, receiver, refundBody, sandbox, waitFor } from "./helpers";

/**
 * Each fault's effect on the provider's state, and how the connector
 * classifies what it saw. The rule under test: a timeout or a lost answer is
 * unknown, never failed; only the provider's explicit not_processed is failed.
 */

const request = (key: string): RefundRequest => ({
  idempotencyKey: key,
  amountCents: 4200,
  currency: "usd",
  chargeId: "ch_42",
  customerId: "cus_42",
  metadata: { executionId: `exec_${key}`, taskId: "task_42" },
});

async function setup(faults: string[], timeoutMs = 2_000) {
  const s = await sandbox();
  return {
    s,
    faulty: new SandboxPaymentConnector({ baseUrl: s.url, faults, timeoutMs }),
    clean: new SandboxPaymentConnector({ baseUrl: s.url }),
  };
}

describe("write faults", () => {
  it("error_before_commit: failed not_processed (retryable), nothing stored, a retry with the key executes", async () => {
    const { s, faulty, clean } = await setup(["error_before_commit"]);
    expect(await faulty.refund(request("k"))).toMatchObject({
      kind: "failed",
      reason: "not_processed",
      retryable: true,
      httpStatus: 503,
    });
    expect(await clean.lookupRefund("k")).toMatchObject({
      kind: "not_found",
      evidence: { httpStatus: 200, idempotencyKey: "k" },
    });
    expect(await listRefunds(s.url)).toHaveLength(0);
    expect(await clean.refund(request("k"))).toMatchObject({ kind: "succeeded", evidence: { replayed: false } });
    expect(await listRefunds(s.url)).toHaveLength(1);
  });

  it("error_after_commit: unknown server_error, stored; lookup finds it and a retry replays it", async () => {
    const { s, faulty, clean } = await setup(["error_after_commit"]);
    expect(await faulty.refund(request("k"))).toMatchObject({
      kind: "unknown",
      reason: "server_error",
      httpStatus: 500,
    });
    const found = await clean.lookupRefund("k");
    expect(found).toMatchObject({
      kind: "found",
      refund: { idempotencyKey: "k", amountCents: 4200, metadata: { execution_id: "exec_k" } },
    });
    const retried = await clean.refund(request("k"));
    expect(retried).toMatchObject({ kind: "succeeded", evidence: { replayed: true } });
    if (found.kind !== "found" || retried.kind !== "succeeded") throw new Error("unreachable");
    expect(retried.refund.id).toBe(found.refund.id);
    expect(await listRefunds(s.url)).toHaveLength(1);
  });

  it("timeout_after_commit: unknown timeout at the client's deadline, stored; lookup finds it", async () => {
    const { s, faulty, clean } = await setup(["timeout_after_commit"], 250);
    const started = Date.now();
    expect(await faulty.refund(request("k"))).toMatchObject({ kind: "unknown", reason: "timeout" });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await clean.lookupRefund("k")).toMatchObject({ kind: "found" });
    expect(await listRefunds(s.url)).toHaveLength(1);
  });

  it("drop_response: unknown connection_lost, stored; lookup finds it", async () => {
    const { s, faulty, clean } = await setup(["drop_response"]);
    expect(await faulty.refund(request("k"))).toMatchObject({ kind: "unknown", reason: "connection_lost" });
    expect(await clean.lookupRefund("k")).toMatchObject({ kind: "found" });
    expect(await listRefunds(s.url)).toHaveLength(1);
  });

  it("a dropped replay is unknown too, and still one refund", async () => {
    const { s, faulty, clean } = await setup(["drop_response"]);
    expect(await clean.refund(request("k"))).toMatchObject({ kind: "succeeded" });
    expect(await faulty.refund(request("k"))).toMatchObject({ kind: "unknown", reason: "connection_lost" });
    expect(await listRefunds(s.url)).toHaveLength(1);
  });

  it("latency past the deadline: unknown timeout, in flight at the provider, then committed", async () => {
    const { s, faulty, clean } = await setup(["latency=800"], 100);
    expect(await faulty.refund(request("k"))).toMatchObject({ kind: "unknown", reason: "timeout" });
    expect(await clean.lookupRefund("k")).toMatchObject({ kind: "unknown", reason: "in_flight" });
    // A retry with the key cannot run the refund a second time while the first runs.
    expect(await clean.refund(request("k"))).toMatchObject({ kind: "unknown", reason: "in_flight", httpStatus: 409 });
    expect(await waitFor(async () => (await clean.lookupRefund("k")).kind === "found")).toBe(true);
    expect(await listRefunds(s.url)).toHaveLength(1);
  });

  it("counts injected faults in the stats", async () => {
    const { s, faulty } = await setup(["latency=5", "error_before_commit"]);
    await faulty.refund(request("a"));
    await faulty.refund(request("b"));
    expect((await get(`${s.url}/__sandbox/stats`)).json.faults_injected).toEqual({
      latency: 2,
      error_before_commit: 2,
    });
  });

  it("the CRM suffers the same faults with the same classification", async () => {
    const s = await sandbox();
    const meta = { executionId: "exec_1", taskId: "task_1" };
    const note = (key: string) => ({
      idempotencyKey: key,
      customerId: "cus_1",
      text: "called the customer",
      metadata: meta,
    });
    const clean = new SandboxCrmConnector({ baseUrl: s.url });
    expect(
      await new SandboxCrmConnector({ baseUrl: s.url, faults: ["error_before_commit"] }).addNote(note("a")),
    ).toMatchObject({ kind: "failed", reason: "not_processed" });
    expect(await clean.lookupNote("a")).toMatchObject({ kind: "not_found" });
    expect(
      await new SandboxCrmConnector({ baseUrl: s.url, faults: ["drop_response"] }).addNote(note("b")),
    ).toMatchObject({ kind: "unknown", reason: "connection_lost" });
    expect(await clean.lookupNote("b")).toMatchObject({ kind: "found" });
    expect(
      await new SandboxCrmConnector({ baseUrl: s.url, faults: ["timeout_after_commit"], timeoutMs: 150 }).addNote(
        note("c"),
      ),
    ).toMatchObject({ kind: "unknown", reason: "timeout" });
    expect(await clean.lookupNote("c")).toMatchObject({ kind: "found" });
  });
});

describe("held writes", () => {
  it("a write held by latency goes on at once when the harness releases its key, the rest of its faults kept; another key stays held", async () => {
    const s = await sandbox();
    // The longest latency there is: without the release, this test would end at its timeout, not at an answer.
    const held = (key: string, faults: string) =>
      post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": key, "X-Sandbox-Fault": faults });
    const inFlight = async (key: string) => (await get(`${s.url}/v1/refunds?idempotency_key=${key}`)).json.in_flight;
    const first = held("held-1", "latency=60000, error_before_commit");
    const second = held("held-2", "latency=60000");
    await waitFor(async () => ((await inFlight("held-1")) && (await inFlight("held-2"))) || undefined);

    expect((await post(`${s.url}/__sandbox/held/release`, { idempotency_key: "held-1" })).json).toEqual({
      released: 1,
    });
    expect((await first).status).toBe(503);
    expect(await inFlight("held-1")).toBe(false);
    expect(await inFlight("held-2")).toBe(true);

    expect((await post(`${s.url}/__sandbox/held/release`, {})).json).toEqual({ released: 1 });
    expect((await second).status).toBe(200);
    expect(await listRefunds(s.url)).toHaveLength(1);
    expect((await post(`${s.url}/__sandbox/held/release`, { idempotency_key: 7 })).status).toBe(400);
  });
});

describe("lookup faults", () => {
  it("a lookup that fails in any way is unknown, never not_found", async () => {
    const s = await sandbox();
    const lookup = (faults: string[]) =>
      new SandboxPaymentConnector({ baseUrl: s.url, lookupFaults: faults, timeoutMs: 150 }).lookupRefund("k");
    expect(await lookup(["error_before_commit"])).toMatchObject({
      kind: "unknown",
      reason: "server_error",
      httpStatus: 503,
    });
    expect(await lookup(["error_after_commit"])).toMatchObject({
      kind: "unknown",
      reason: "server_error",
      httpStatus: 500,
    });
    expect(await lookup(["timeout_after_commit"])).toMatchObject({ kind: "unknown", reason: "timeout" });
    expect(await lookup(["drop_response"])).toMatchObject({ kind: "unknown", reason: "connection_lost" });
    expect(await lookup([])).toMatchObject({ kind: "not_found" });
  });
});

describe("transport", () => {
  it("an unreachable provider: the create failed (never sent), the lookup unknown", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const connector = new SandboxPaymentConnector({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2_000 });
    expect(await connector.refund(request("k"))).toMatchObject({
      kind: "failed",
      reason: "unreachable",
      retryable: true,
    });
    expect(await connector.lookupRefund("k")).toMatchObject({ kind: "unknown", reason: "unreachable" });
  });

  it("the caller's cancellation: failed before sending, unknown after", async () => {
    const { s, clean } = await setup([]);
    expect(await clean.refund(request("a"), { signal: AbortSignal.abort() })).toMatchObject({
      kind: "failed",
      reason: "cancelled",
    });
    const slow = new SandboxPaymentConnector({ baseUrl: s.url, faults: ["latency=500"] });
    expect(await slow.refund(request("b"), { signal: AbortSignal.timeout(150) })).toMatchObject({
      kind: "unknown",
      reason: "aborted",
    });
    // The provider does not know the caller left: the refund still happens.
    expect(await waitFor(async () => (await listRefunds(s.url)).length === 1)).toBe(true);
  });

  it.each([
    ["a 502 page from a proxy", 502, "text/html", "<h1>Bad Gateway</h1>", "server_error"],
    ["a 503 without the provider's body", 503, "application/json", '{"message":"unavailable"}', "server_error"],
    ["a 400 without the provider's body", 400, "text/plain", "bad", "unexpected_response"],
    ["a 200 that is not a refund", 200, "application/json", '{"ok":true}', "unexpected_response"],
    ["a 200 that is not JSON", 200, "application/json", '{"id":"re_', "unexpected_response"],
  ])("%s is unknown (%s)", async (_what, status, type, body, reason) => {
    const upstream = await receiver((_r, res) => {
      res.writeHead(status, { "Content-Type": type });
      res.end(body);
    });
    const connector = new SandboxPaymentConnector({ baseUrl: upstream.url });
    expect(await connector.refund(request("k"))).toMatchObject({ kind: "unknown", reason, httpStatus: status });
  });

  it("a 200 for another request is unknown, not success", async () => {
    const s = await sandbox();
    const first = await new SandboxPaymentConnector({ baseUrl: s.url }).refund(request("k"));
    if (first.kind !== "succeeded") throw new Error("expected success");
    const wire = (await get(`${s.url}/v1/refunds/${first.refund.id}`)).json;
    // A proxy cache or a provider bug answering with someone else's refund: same key, other amount.
    const impostor = await receiver((_r, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ ...wire, amount_cents: 1 }));
    });
    const outcome = await new SandboxPaymentConnector({ baseUrl: impostor.url }).refund(request("k"));
    expect(outcome).toMatchObject({ kind: "unknown", reason: "unexpected_response" });
    expect(outcome.kind === "unknown" && outcome.message).toContain("amount_cents");
  });

  it("records evidence a person can trace: provider request id, digest, replay flag", async () => {
    const { clean } = await setup([]);
    const outcome = await clean.refund(request("k"));
    expect(outcome).toMatchObject({
      kind: "succeeded",
      evidence: {
        provider: "sandbox",
        operation: "refunds.create",
        idempotencyKey: "k",
        httpStatus: 200,
        replayed: false,
        providerRequestId: expect.stringMatching(/^req_/),
        bodyDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      },
    });
  });

  it("refuses to send an effect without an idempotency key or execution id", async () => {
    const { clean } = await setup([]);
    await expect(clean.refund({ ...request("k"), idempotencyKey: " " })).rejects.toMatchObject({
      code: "invariant_violated",
    });
    await expect(clean.refund({ ...request("k"), metadata: { executionId: "", taskId: "t" } })).rejects.toMatchObject({
      code: "invariant_violated",
    });
  });
});
