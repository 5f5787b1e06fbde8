import { describe, expect, it } from "vitest";
import { releaseListSchema, rollbackListSchema } from "@/lib/connectors/sandbox/contract";
import { startSandbox } from "@/programs/sandbox/server";
import { get, post, sandbox, tempDir } from "./helpers";

const release = (over: Record<string, unknown> = {}) => ({
  service: "checkout",
  version: "2.4.0",
  environment: "production",
  commit: "9f1c2ab",
  metadata: { execution_id: "exec_1", task_id: "task_1" },
  ...over,
});

async function releases(base: string, key?: string) {
  const res = await fetch(`${base}/v1/releases${key ? `?idempotency_key=${encodeURIComponent(key)}` : ""}`);
  return releaseListSchema.parse(await res.json());
}

describe("the release service", () => {
  it("deploys once per key: a retry is answered with the first release", async () => {
    const s = await sandbox();
    const first = await post(`${s.url}/v1/releases`, release(), { "Idempotency-Key": "deploy-1" });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ status: "deployed", service: "checkout", idempotency_key: "deploy-1" });
    expect(first.json.id).toMatch(/^rel_/);
    const again = await post(`${s.url}/v1/releases`, release(), { "Idempotency-Key": "deploy-1" });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect((await releases(s.url)).data).toHaveLength(1);
    expect((await get(`${s.url}/__sandbox/stats`)).json).toMatchObject({ releases: 1 });
  });

  it("answers a lookup by key: the release, or nothing", async () => {
    const s = await sandbox();
    await post(`${s.url}/v1/releases`, release(), { "Idempotency-Key": "deploy-1" });
    expect((await releases(s.url, "deploy-1")).data.map((r) => r.version)).toEqual(["2.4.0"]);
    expect(await releases(s.url, "deploy-2")).toEqual({ data: [], in_flight: false });
  });

  it("refuses the key with another version and a body that names no environment", async () => {
    const s = await sandbox();
    await post(`${s.url}/v1/releases`, release(), { "Idempotency-Key": "deploy-1" });
    const other = await post(`${s.url}/v1/releases`, release({ version: "2.5.0" }), { "Idempotency-Key": "deploy-1" });
    expect(other.status).toBe(409);
    const bad = await post(`${s.url}/v1/releases`, release({ environment: "moon" }), { "Idempotency-Key": "deploy-3" });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ param: "environment" });
    expect((await releases(s.url)).data.map((r) => r.version)).toEqual(["2.4.0"]);
  });

  it("rolls a deployed release back once per key, and refuses one that was never deployed, applying nothing", async () => {
    const s = await sandbox();
    const deployed = await post(`${s.url}/v1/releases`, release(), { "Idempotency-Key": "deploy-1" });
    const first = await post(`${s.url}/v1/rollbacks`, release(), { "Idempotency-Key": "undo-1" });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      status: "rolled_back",
      release_id: deployed.json.id,
      idempotency_key: "undo-1",
    });
    const again = await post(`${s.url}/v1/rollbacks`, release(), { "Idempotency-Key": "undo-1" });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    const never = await post(`${s.url}/v1/rollbacks`, release({ version: "9.9.9" }), { "Idempotency-Key": "undo-2" });
    expect(never.status).toBe(400);
    expect(never.json.error).toMatchObject({ code: "release_not_deployed" });
    const lookup = await fetch(`${s.url}/v1/rollbacks?idempotency_key=undo-1`);
    expect(rollbackListSchema.parse(await lookup.json()).data.map((r) => r.id)).toEqual([first.json.id]);
    expect((await get(`${s.url}/__sandbox/stats`)).json).toMatchObject({ releases: 1, rollbacks: 1 });
  });

  it("keeps its releases in the journal across a restart", async () => {
    const dir = await tempDir();
    const journalPath = `${dir}/journal.jsonl`;
    const first = await startSandbox({ journalPath });
    await post(`${first.url}/v1/releases`, release(), { "Idempotency-Key": "deploy-1" });
    await first.close();
    const second = await sandbox({ journalPath });
    expect((await releases(second.url, "deploy-1")).data).toHaveLength(1);
  });
});
