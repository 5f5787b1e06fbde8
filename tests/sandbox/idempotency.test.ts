import { describe, expect, it } from "vitest";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { findDuplicateRefunds } from "@/lib/connectors/sandbox/duplicate-refunds";
import { get, listRefunds, post, refundBody, sandbox, waitFor } from "./helpers";

describe("refund idempotency", () => {
  it("answers the same key and parameters with the stored refund, never a second one", async () => {
    const s = await sandbox();
    const first = await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    expect(first.status).toBe(200);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    expect(first.json).toMatchObject({
      status: "succeeded",
      amount_cents: 1250,
      idempotency_key: "k1",
      metadata: { execution_id: "exec_1" },
    });
    expect(first.json.id).toMatch(/^re_/);

    const again = await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    expect(again.status).toBe(200);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await listRefunds(s.url)).toHaveLength(1);
    expect((await get(`${s.url}/__sandbox/stats`)).json).toMatchObject({
      refunds: 1,
      replays: 1,
      duplicates_prevented: 1,
    });
  });

  it("refuses the key with other parameters (409) and keeps the first refund", async () => {
    const s = await sandbox();
    await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    const other = await post(`${s.url}/v1/refunds`, refundBody({ amount_cents: 999 }), { "Idempotency-Key": "k1" });
    expect(other.status).toBe(409);
    expect(other.json.error).toMatchObject({ type: "idempotency_error", code: "idempotency_key_reused" });
    const refunds = await listRefunds(s.url);
    expect(refunds.map((r) => r.amount_cents)).toEqual([1250]);
  });

  it("lets exactly one of many concurrent same-key requests through", async () => {
    const s = await sandbox();
    // The latency keeps the first request in flight while the others arrive;
    // a straggler arriving after it finished gets the replay, which is fine too.
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "race", "X-Sandbox-Fault": "latency=400" }),
      ),
    );
    const created = results.filter((r) => r.status === 200 && r.headers.get("Idempotent-Replayed") === null);
    const refused = results.filter((r) => r.status !== 200);
    expect(created).toHaveLength(1);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(r.json.error.code).toBe("idempotency_key_in_use");
    }
    expect(await listRefunds(s.url)).toHaveLength(1);
    const after = await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "race" });
    expect(after.json.id).toBe(created[0]?.json.id);
  });

  it("tells a lookup that the key is in flight, and the connector calls that unknown", async () => {
    const s = await sandbox();
    const pending = post(`${s.url}/v1/refunds`, refundBody(), {
      "Idempotency-Key": "slow",
      "X-Sandbox-Fault": "latency=600",
    });
    const seen = await waitFor(async () => {
      const { json } = await get(`${s.url}/v1/refunds?idempotency_key=slow`);
      return json.in_flight ? json : null;
    });
    expect(seen).toEqual({ data: [], in_flight: true });
    expect(await new SandboxPaymentConnector({ baseUrl: s.url }).lookupRefund("slow")).toMatchObject({
      kind: "unknown",
      reason: "in_flight",
    });
    await pending;
    expect(await new SandboxPaymentConnector({ baseUrl: s.url }).lookupRefund("slow")).toMatchObject({ kind: "found" });
  });

  it("does not store validation errors against the key", async () => {
    const s = await sandbox();
    const bad = await post(`${s.url}/v1/refunds`, refundBody({ currency: "USD" }), { "Idempotency-Key": "k1" });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({
      type: "invalid_request_error",
      code: "parameter_invalid",
      param: "currency",
    });
    const good = await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    expect(good.status).toBe(200);
    expect(good.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it.each([
    ["no Idempotency-Key", refundBody(), {}, "idempotency_key_missing"],
    ["an unknown field", refundBody({ reason: "x" }), { "Idempotency-Key": "k" }, "parameter_invalid"],
    ["a fractional amount", refundBody({ amount_cents: 1.5 }), { "Idempotency-Key": "k" }, "parameter_invalid"],
    ["an unknown fault", refundBody(), { "Idempotency-Key": "k", "X-Sandbox-Fault": "explode" }, "parameter_invalid"],
    [
      "two outcome faults",
      refundBody(),
      { "Idempotency-Key": "k", "X-Sandbox-Fault": "drop_response,error_after_commit" },
      "parameter_invalid",
    ],
  ])("refuses %s with 400", async (_what, body, headers, code) => {
    const s = await sandbox();
    const res = await post(`${s.url}/v1/refunds`, body, headers);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe(code);
    expect(await listRefunds(s.url)).toHaveLength(0);
  });

  it("serves refunds by id, by key and as a list; refuses unknown parameters", async () => {
    const s = await sandbox();
    const { json: refund } = await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    expect((await get(`${s.url}/v1/refunds/${refund.id}`)).json).toEqual(refund);
    expect((await get(`${s.url}/v1/refunds/re_nope`)).json.error.code).toBe("resource_missing");
    expect((await get(`${s.url}/v1/refunds?idempotency_key=k1`)).json).toEqual({ data: [refund], in_flight: false });
    expect((await get(`${s.url}/v1/refunds?idempotency_key=k2`)).json).toEqual({ data: [], in_flight: false });
    expect((await get(`${s.url}/v1/refunds?limit=5`)).status).toBe(400);
    const res = await fetch(`${s.url}/v1/refunds`, { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET, POST");
  });

  it("counts duplicate refunds of one execution made under different keys", async () => {
    const s = await sandbox();
    await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "a" });
    await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "b" });
    await post(`${s.url}/v1/refunds`, refundBody({ metadata: { execution_id: "exec_2", task_id: "task_1" } }), {
      "Idempotency-Key": "c",
    });
    const duplicates = findDuplicateRefunds(await listRefunds(s.url));
    expect(duplicates.byExecution).toEqual([{ chargeId: "ch_1", executionId: "exec_1", refundIds: expect.any(Array) }]);
    expect(duplicates.byIdempotencyKey).toEqual([]);
    expect((await get(`${s.url}/__sandbox/stats`)).json.consistency).toEqual({
      duplicate_refunds_by_execution: 1,
      duplicate_refunds_by_idempotency_key: 0,
    });
  });
});

describe("CRM notes", () => {
  const meta = { executionId: "exec_9", taskId: "task_9" };

  it("stores a note once per key, lists it, and looks it up", async () => {
    const s = await sandbox();
    const crm = new SandboxCrmConnector({ baseUrl: s.url });
    const first = await crm.addNote({
      idempotencyKey: "n1",
      customerId: "cus_1",
      text: "Refund issued",
      metadata: meta,
    });
    expect(first).toMatchObject({
      kind: "succeeded",
      note: { customerId: "cus_1", text: "Refund issued", metadata: { execution_id: "exec_9" } },
      evidence: { replayed: false },
    });
    const again = await crm.addNote({
      idempotencyKey: "n1",
      customerId: "cus_1",
      text: "Refund issued",
      metadata: meta,
    });
    expect(again).toMatchObject({ kind: "succeeded", evidence: { replayed: true } });
    if (first.kind !== "succeeded" || again.kind !== "succeeded") throw new Error("unreachable");
    expect(again.note.id).toBe(first.note.id);

    expect((await get(`${s.url}/v1/crm/customers/cus_1/notes`)).json.data).toHaveLength(1);
    expect((await get(`${s.url}/v1/crm/customers/cus_2/notes`)).json.data).toHaveLength(0);
    expect(await crm.lookupNote("n1")).toMatchObject({ kind: "found", note: { id: first.note.id } });
    expect(await crm.lookupNote("n2")).toMatchObject({ kind: "not_found" });
  });

  it("refuses the key on another customer or text as a different request", async () => {
    const s = await sandbox();
    const crm = new SandboxCrmConnector({ baseUrl: s.url });
    await crm.addNote({ idempotencyKey: "n1", customerId: "cus_1", text: "a", metadata: meta });
    // Unknown, not failed: something is already stored under the key, and only a lookup says what.
    expect(await crm.addNote({ idempotencyKey: "n1", customerId: "cus_2", text: "a", metadata: meta })).toMatchObject({
      kind: "unknown",
      reason: "idempotency_key_reused",
    });
    expect(await crm.addNote({ idempotencyKey: "n1", customerId: "cus_1", text: "b", metadata: meta })).toMatchObject({
      kind: "unknown",
      reason: "idempotency_key_reused",
    });
    expect((await get(`${s.url}/v1/crm/notes`)).json.data).toHaveLength(1);
  });

  it("keeps refund and note keys apart", async () => {
    const s = await sandbox();
    await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "shared" });
    const note = await post(
      `${s.url}/v1/crm/customers/cus_1/notes`,
      { text: "hello" },
      { "Idempotency-Key": "shared" },
    );
    expect(note.status).toBe(200);
    expect((await get(`${s.url}/v1/refunds?idempotency_key=shared`)).json.data).toHaveLength(1);
    expect((await get(`${s.url}/v1/crm/notes?idempotency_key=shared`)).json.data).toHaveLength(1);
  });
});
