import { beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { isAppError } from "@/lib/core/errors";
import { signWebhook } from "@/lib/connectors/sandbox/webhook-signature";
import { importCheckpoint } from "@/lib/use-cases/checkpoints/import-checkpoint";
import type { StoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import * as sandboxWebhookRoute from "@/app/api/v1/events/sandbox/route";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * Issue 11: every free-form JSON input bounded in depth and size, a 400
 * naming the field. Two inputs were left out: the sandbox provider's signed
 * webhooks (parsed unbounded once the signature matched) and a checkpoint
 * imported from another database (its `state_snapshot` walked unbounded by
 * the verification).
 */
const db = useTestDatabase();
const secret = "a-webhook-secret-for-this-test";

beforeAll(() => {
  // Read once by getEnv, at first use (after this).
  process.env.VERITY_SANDBOX_WEBHOOK_SECRET = secret;
  (globalThis as unknown as { verityDb?: DatabaseHandle }).verityDb = {
    db,
    forTenant: () => db,
    platformDb: db,
    adapterFactory: undefined as never,
    listenForChanges: undefined as never,
    close: async () => {},
  };
});

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}
const nestedText = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

function refundEvent(id: string, extra: Record<string, unknown> = {}) {
  const now = new Date().toISOString();
  return {
    id,
    type: "refund.succeeded",
    created_at: now,
    data: {
      id: `re_${id.slice(4)}`,
      status: "succeeded",
      amount_cents: 1200,
      currency: "usd",
      charge_id: "ch_1",
      customer_id: "cus_1",
      metadata: { execution_id: "exec_nobody", task_id: "task_nobody" },
      idempotency_key: `key-${id}`,
      created_at: now,
      ...extra,
    },
  };
}

async function postWebhook(body: string, signed = true) {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (signed) headers["Sandbox-Signature"] = signWebhook(secret, body, Math.floor(Date.now() / 1000));
  const response = await sandboxWebhookRoute.POST(
    new Request("http://localhost/api/v1/events/sandbox", { method: "POST", headers, body }),
  );
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    body: (await response.json()) as { errors?: unknown; type?: string },
  };
}

describe("the sandbox webhook's JSON bounds", () => {
  it("refuses a signed event whose data nests 40 deep with a 400 naming data; nothing is received", async () => {
    const res = await postWebhook(JSON.stringify(refundEvent("evt_deep40", { extra: nested(40) })));
    expect(res.status).toBe(400);
    expect(res.type).toContain("application/problem+json");
    expect(res.body.errors).toEqual([{ field: "data", message: "nests deeper than 32 levels" }]);
    expect(await db.inboxEvent.count({ where: { eventId: "evt_deep40" } })).toBe(0);
  });

  it("refuses 8,000 deep before parsing it, naming the member", async () => {
    const event = JSON.stringify(refundEvent("evt_deep8000"));
    const body = event.replace(/}$/, `,"deep":${nestedText(8000)}}`);
    const res = await postWebhook(body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: "deep", message: "nests deeper than 64 levels" }]);
  });

  it("an unsigned deep body is still refused as unsigned: the signature is checked first", async () => {
    const res = await postWebhook(JSON.stringify(refundEvent("evt_unsigned", { extra: nested(40) })), false);
    expect(res.status).toBe(401);
  });

  it("an event within the bounds is received as before", async () => {
    const res = await postWebhook(JSON.stringify(refundEvent("evt_shallow", { extra: nested(5) })));
    expect(res.status).toBe(200);
    expect(await db.inboxEvent.count({ where: { eventId: "evt_shallow" } })).toBe(1);
  });
});

describe("a checkpoint import's state_snapshot bounds", () => {
  function record(payload: string): StoredCheckpoint {
    return {
      id: "ckpt_imported",
      taskId: "task_imported",
      stateVersion: 1,
      schemaVersion: "2",
      trigger: "on_request",
      payload,
      snapshotDigest: "sha256:0",
      signature: "0",
      keyId: "local-1",
      createdAt: new Date(),
      createdBy: "spiffe://verity.local/agent/primary",
    };
  }

  async function refusal(payload: string) {
    try {
      await importCheckpoint(db, record(payload));
    } catch (error) {
      if (isAppError(error)) return { code: error.code, details: error.details };
      throw error;
    }
    throw new Error("imported");
  }

  it("refuses a snapshot nested 40 deep, naming state_snapshot, before anything else is checked", async () => {
    const payload = JSON.stringify({ schema_version: "2", checkpoint_id: "ckpt_imported", state_snapshot: nested(40) });
    expect(await refusal(payload)).toEqual({
      code: "validation_failed",
      details: { errors: [{ field: "state_snapshot", message: "nests deeper than 32 levels" }] },
    });
    expect(await db.checkpoint.count()).toBe(0);
  });

  it("refuses 8,000 deep unparsed, naming the member", async () => {
    const payload = `{"schema_version":"2","state_snapshot":${nestedText(8000)}}`;
    expect(await refusal(payload)).toEqual({
      code: "validation_failed",
      details: { errors: [{ field: "state_snapshot", message: "nests deeper than 64 levels" }] },
    });
  });

  it("a shallow snapshot goes on to the usual checks (here: the task is not on this database)", async () => {
    const payload = JSON.stringify({ schema_version: "2", state_snapshot: nested(5) });
    expect((await refusal(payload)).code).toBe("not_found");
  });
});
