import { appendFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { startSandbox } from "@/programs/sandbox/server";
import { get, listRefunds, post, refundBody, sandbox, tempDir } from "./helpers";

describe("journal", () => {
  it("replays refunds, notes and their keys after a restart", async () => {
    const journalPath = path.join(await tempDir(), "nested", "journal.jsonl");
    const first = await sandbox({ journalPath });
    const refund = await post(`${first.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    await post(`${first.url}/v1/refunds`, refundBody({ amount_cents: 7 }), { "Idempotency-Key": "k2" });
    const note = await post(`${first.url}/v1/crm/customers/cus_1/notes`, { text: "hi" }, { "Idempotency-Key": "n1" });
    // A committed-but-unanswered refund is just as durable.
    await post(`${first.url}/v1/refunds`, refundBody({ amount_cents: 8 }), {
      "Idempotency-Key": "k3",
      "X-Sandbox-Fault": "error_after_commit",
    });
    await first.close();

    const second = await sandbox({ journalPath });
    expect((await listRefunds(second.url)).map((r) => r.idempotency_key)).toEqual(["k1", "k2", "k3"]);
    const replay = await post(`${second.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.json).toEqual(refund.json);
    expect(
      (await post(`${second.url}/v1/refunds`, refundBody({ amount_cents: 1 }), { "Idempotency-Key": "k1" })).status,
    ).toBe(409);
    expect((await get(`${second.url}/v1/crm/customers/cus_1/notes`)).json.data).toEqual([note.json]);
    expect(await new SandboxPaymentConnector({ baseUrl: second.url }).lookupRefund("k3")).toMatchObject({
      kind: "found",
    });
    expect(await listRefunds(second.url)).toHaveLength(3);
  });

  it("writes one line per committed effect, and none for failures, replays or validation errors", async () => {
    const journalPath = path.join(await tempDir(), "journal.jsonl");
    const s = await sandbox({ journalPath });
    await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    await post(`${s.url}/v1/refunds`, refundBody({ amount_cents: 0 }), { "Idempotency-Key": "k2" });
    await post(`${s.url}/v1/refunds`, refundBody(), {
      "Idempotency-Key": "k3",
      "X-Sandbox-Fault": "error_before_commit",
    });
    const lines = (await readFile(journalPath, "utf8")).trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({
      v: 1,
      type: "committed",
      namespace: "refunds",
      idempotency_key: "k1",
      status: 200,
    });
  });

  it("drops a torn last line (a write that was never acknowledged) and appends after it cleanly", async () => {
    const journalPath = path.join(await tempDir(), "journal.jsonl");
    const first = await sandbox({ journalPath });
    await post(`${first.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    await first.close();
    await appendFile(journalPath, '{"v":1,"type":"committed","namespace":"refu');

    const second = await sandbox({ journalPath });
    expect(await listRefunds(second.url)).toHaveLength(1);
    await post(`${second.url}/v1/refunds`, refundBody({ amount_cents: 2 }), { "Idempotency-Key": "k2" });
    await second.close();

    const third = await sandbox({ journalPath });
    expect((await listRefunds(third.url)).map((r) => r.idempotency_key)).toEqual(["k1", "k2"]);
  });

  it("refuses to start on a corrupt line in the middle", async () => {
    const journalPath = path.join(await tempDir(), "journal.jsonl");
    const first = await sandbox({ journalPath });
    await post(`${first.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    await first.close();
    const good = await readFile(journalPath, "utf8");
    await writeFile(journalPath, `not json\n${good}`);
    await expect(startSandbox({ journalPath })).rejects.toThrow(/line 1 is not JSON/);
  });

  it("resets only when allowed, and a reset empties the journal too", async () => {
    const journalPath = path.join(await tempDir(), "journal.jsonl");
    const locked = await sandbox({ journalPath, allowReset: false });
    await post(`${locked.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "k1" });
    const refused = await post(`${locked.url}/__sandbox/reset`, {});
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe("reset_disabled");
    await locked.close();

    const open = await sandbox({ journalPath, allowReset: true });
    expect(await listRefunds(open.url)).toHaveLength(1);
    expect((await post(`${open.url}/__sandbox/reset`, {})).status).toBe(200);
    expect(await listRefunds(open.url)).toHaveLength(0);
    expect((await get(`${open.url}/__sandbox/stats`)).json).toMatchObject({
      requests: 1,
      refunds: 0,
      duplicates_prevented: 0,
    }); // the one request: the list above
    await open.close();
    expect(await readFile(journalPath, "utf8")).toBe("");
  });
});
