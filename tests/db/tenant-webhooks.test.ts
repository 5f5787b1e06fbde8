import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signWebhook } from "@/lib/connectors/sandbox/webhook-signature";
import { openTenant } from "@/lib/use-cases/tenants/open-tenant";
import * as sandboxWebhookRoute from "@/app/api/v1/events/sandbox/route";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { serveRoutesFrom } from "@/tests/helpers/route-call";
import { executionRow, refund, refundExecution } from "@/tests/helpers/effects";

/**
 * A provider's webhook carries no caller: it is received by the tenant whose
 * execution it names (lib/use-cases/reconciliation/provider-event-tenants.ts),
 * on that tenant's connection, and settles that tenant's call; an event
 * naming nobody's goes to the first tenant, recorded as naming an unknown
 * execution. Through the real route handler, signed as the sandbox signs.
 */
let t: TestDatabase;
const secret = "a-webhook-secret-for-the-tenant-test";
const system = { identity: "system:test", kind: "system" } as const;

beforeAll(async () => {
  process.env.VERITY_SANDBOX_WEBHOOK_SECRET = secret;
  t = await openTestPglite();
  serveRoutesFrom(t);
  await openTenant(t, { id: "acme", name: "Acme" }, system);
});
afterAll(async () => {
  serveRoutesFrom(undefined);
  await t?.close();
});

function refundSucceeded(eventId: string, execution: { id: string; idempotencyKey: string; taskId: string }) {
  const now = new Date().toISOString();
  return {
    id: eventId,
    type: "refund.succeeded",
    created_at: now,
    data: {
      id: `re_${eventId.slice(4)}`,
      status: "succeeded",
      ...refund,
      metadata: { execution_id: execution.id, task_id: execution.taskId },
      idempotency_key: execution.idempotencyKey,
      created_at: now,
    },
  };
}

async function postWebhook(event: unknown) {
  const body = JSON.stringify(event);
  const response = await sandboxWebhookRoute.POST(
    new Request("http://localhost/api/v1/events/sandbox", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Sandbox-Signature": signWebhook(secret, body, Math.floor(Date.now() / 1000)),
      },
      body,
    }),
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("provider webhooks per tenant", () => {
  it("an event naming a second tenant's refund settles it there, and the first tenant's inbox never sees it", async () => {
    const acme = t.forTenant("acme");
    const execution = await refundExecution(acme);
    expect(execution.idempotencyKey).toMatch(/^vrt\.acme:/);
    const received = await postWebhook(refundSucceeded("evt_acme_refund", execution));
    expect(received.status, JSON.stringify(received.body)).toBe(200);
    expect(received.body.duplicate).toBe(false);
    expect((await executionRow(acme, execution.id)).status).toBe("SUCCEEDED");
    expect(await acme.inboxEvent.count({ where: { eventId: "evt_acme_refund" } })).toBe(1);
    expect(await t.db.inboxEvent.count({ where: { eventId: "evt_acme_refund" } })).toBe(0);
    // Redelivered: the first receipt, in the same tenant.
    const again = await postWebhook(refundSucceeded("evt_acme_refund", execution));
    expect(again.body.duplicate).toBe(true);
  });

  it("each tenant's refund with the same task and call ids is settled in its own tenant only", async () => {
    const home = await refundExecution(t.db);
    const acme = await refundExecution(t.forTenant("acme"));
    expect(home.idempotencyKey).not.toBe(acme.idempotencyKey);
    expect((await postWebhook(refundSucceeded("evt_home_only", home))).status).toBe(200);
    expect((await executionRow(t.db, home.id)).status).toBe("SUCCEEDED");
    expect((await executionRow(t.forTenant("acme"), acme.id)).status).toBe("SENT");
  });

  it("an event that names no tenant's execution is recorded by the first tenant as naming an unknown one", async () => {
    const stranger = { id: "exec_nobody", idempotencyKey: "key-made-by-hand", taskId: "task_nobody" };
    const received = await postWebhook(refundSucceeded("evt_by_hand", stranger));
    expect(received.status).toBe(200);
    expect(received.body.result).toMatchObject({ applied: false, outcome: "unknown_execution" });
    expect(await t.db.inboxEvent.count({ where: { eventId: "evt_by_hand" } })).toBe(1);
    expect(await t.forTenant("acme").inboxEvent.count({ where: { eventId: "evt_by_hand" } })).toBe(0);
  });
});
