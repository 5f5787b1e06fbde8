import { describe, expect, it } from "vitest";
import { openedAlert } from "@/lib/use-cases/alerts/divergence";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { openJson } from "@/lib/stores/field-encryption";
import { performEffect } from "@/lib/connectors/effects";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { verifyWebhookSignature } from "@/lib/connectors/sandbox/webhook-signature";
import {
  createWebhookDeliverer,
  dispatchOutbox,
  enqueueOutbox,
  receiveEvent,
  type OutboxMessageView,
} from "@/lib/stores/messaging";
import { inboxActor, receiveSandboxWebhook } from "@/lib/use-cases/reconciliation/reconciler";
import { listTransitions } from "@/lib/use-cases/tasks/task-queries";
import {
  agent,
  connectorsFor,
  failure,
  lostAnswer,
  refund,
  refundExecution,
  sandboxWithWebhooks,
} from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { post, receiver, sleepMs } from "@/tests/sandbox/helpers";

const db = useTestDatabase();
const outboxSecret = "outbox-secret-for-tests-0123456789abcdef";

const event = (id: string, payload: Record<string, unknown> = { n: 1 }) => ({
  event_id: id,
  source: "test",
  type: "thing.happened",
  payload,
});

describe("inbox", () => {
  it("applies an event once; a duplicate gets the first result back without applying", async () => {
    let applied = 0;
    const apply = async () => ({ applied: ++applied });
    const first = await receiveEvent(db, event("evt_once"), apply);
    const second = await receiveEvent(db, event("evt_once"), apply);
    expect(first).toEqual({ duplicate: false, result: { applied: 1 } });
    expect(second).toEqual({ duplicate: true, result: { applied: 1 } });
    expect(applied).toBe(1);
    expect(await db.inboxEvent.findFirstOrThrow({ where: { eventId: "evt_once" } })).toMatchObject({
      source: "test",
      result: { applied: 1 },
    });
  });

  it("the inbox row and the changes commit together: a failed apply records nothing, and the redelivery applies", async () => {
    const failing = receiveEvent(db, event("evt_retry"), async (tx) => {
      await enqueueOutbox(tx, { topic: "review.decided", payload: { from: "evt_retry" } });
      throw new Error("crash mid-apply");
    });
    await expect(failing).rejects.toThrow("crash mid-apply");
    expect(await db.inboxEvent.count({ where: { eventId: "evt_retry" } })).toBe(0);
    expect(await db.outboxMessage.count({ where: { payload: { equals: { from: "evt_retry" } } } })).toBe(0);
    expect((await receiveEvent(db, event("evt_retry"), async () => "ok")).result).toBe("ok");
  });

  it("two deliveries of one event at the same moment apply it once", async () => {
    let applied = 0;
    const results = await Promise.all([1, 2, 3].map(() => receiveEvent(db, event("evt_race"), async () => ++applied)));
    expect(applied).toBe(1);
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(results.map((r) => r.result)).toEqual([1, 1, 1]);
  });

  it("keeps the body as received sealed: a provider's customer is in no column of the inbox in the clear", async () => {
    const customer = `cus_inbox_${Date.now()}`;
    await receiveEvent(db, event("evt_sealed", { customer_id: customer, amount_cents: 1200 }), async () => null);
    const [row] = await db.$queryRaw<Array<{ text: string }>>`
      SELECT i::text AS text FROM inbox_events i WHERE event_id = 'evt_sealed'`;
    expect(row?.text).toContain("vty1.");
    expect(row?.text).not.toContain(customer);
    const stored = await db.inboxEvent.findFirstOrThrow({ where: { eventId: "evt_sealed" } });
    expect(await openJson(db, stored.payload, "inbox_events.payload:evt_sealed")).toEqual({
      customer_id: customer,
      amount_cents: 1200,
    });
  });

  it("the same event id from another source is a conflict, not a duplicate", async () => {
    await receiveEvent(db, event("evt_shared"), async () => null);
    expect((await failure(receiveEvent(db, { ...event("evt_shared"), source: "other" }, async () => null))).code).toBe(
      "idempotency_conflict",
    );
  });
});

describe("sandbox refund.succeeded webhooks", () => {
  it("a webhook delivered twice settles an unknown refund once: RECONCILED_SUCCEEDED with the event as evidence, task VALIDATING", async () => {
    const { s, webhooks } = await sandboxWithWebhooks();
    const execution = await refundExecution(db);
    await lostAnswer(s.url, execution, ["timeout_after_commit", "duplicate_webhook"]);
    await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    const bodies = await webhooks();
    expect(bodies).toHaveLength(2);

    const results = [];
    for (const body of bodies) results.push(await receiveSandboxWebhook(db, body));
    expect(results.map((r) => r.duplicate)).toEqual([false, true]);
    expect(results[0]!.result).toMatchObject({
      applied: true,
      outcome: "settled",
      execution_id: execution.id,
      status: "RECONCILED_SUCCEEDED",
    });
    expect(results[1]!.result).toEqual(results[0]!.result);

    const settled = await getExecutionRowOrThrow(db, execution.id);
    expect(settled.status).toBe("RECONCILED_SUCCEEDED");
    expect(settled.evidence).toMatchObject({ source: "webhook", provider: { event_id: bodies[0]!.id } });
    const transitions = await listTransitions(db, execution.taskId);
    expect(transitions.slice(-2).map((tr) => [tr.toStatus, tr.actor])).toEqual([
      ["RECONCILING", agent.identity],
      ["VALIDATING", inboxActor.identity],
    ]);
    expect(
      await db.executionEvent.count({ where: { executionId: execution.id, toStatus: "RECONCILED_SUCCEEDED" } }),
    ).toBe(1);
  });

  it("settles a SENT refund as SUCCEEDED; an event about a refund recorded succeeded changes nothing", async () => {
    const { s, webhooks } = await sandboxWithWebhooks();
    const execution = await refundExecution(db);
    await performEffect(execution, connectorsFor(s.url, { faults: ["drop_response"] }));
    const body = (await webhooks())[0]!;
    const applied = await receiveSandboxWebhook(db, body);
    expect(applied.result).toMatchObject({ outcome: "settled", status: "SUCCEEDED" });
    expect((await db.task.findFirstOrThrow({ where: { id: execution.taskId } })).status).toBe("VALIDATING");

    const replayedUnderNewId = await receiveSandboxWebhook(db, { ...body, id: `${body.id}x` });
    expect(replayedUnderNewId).toMatchObject({
      duplicate: false,
      result: { applied: false, outcome: "already_succeeded" },
    });
  });

  it("an event about a refund recorded as failed overturns the failure: RECONCILED_SUCCEEDED with both records, the task left to its agent", async () => {
    const { s, webhooks } = await sandboxWithWebhooks();
    const execution = await refundExecution(db);
    await performEffect(execution, connectorsFor(s.url, { faults: ["drop_response"] }));
    // A worker that misread the lost answer as a failure.
    await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "failed", error: "connection reset" },
      agent,
    );
    const body = (await webhooks())[0]!;
    const applied = await receiveSandboxWebhook(db, body);
    expect(applied.result).toMatchObject({
      applied: true,
      outcome: "corrected_after_failure",
      status: "RECONCILED_SUCCEEDED",
    });
    const settled = await getExecutionRowOrThrow(db, execution.id);
    expect(settled.evidence).toMatchObject({
      source: "webhook",
      earlier: { status: "FAILED", error: "connection reset" },
      record: { idempotency_key: execution.idempotencyKey },
      provider: { event_id: body.id },
    });
    // The failure sent the task back to RUNNING, where a success leaves it too: its agent reads the receipt.
    expect((await db.task.findFirstOrThrow({ where: { id: execution.taskId } })).status).toBe("RUNNING");
    expect(await db.divergenceAlert.count({ where: { executionId: execution.id } })).toBe(0);
  });

  it("an event about a refund recorded as failed whose record is not the request raises effect_found_after_failure and corrects nothing", async () => {
    const { s, webhooks } = await sandboxWithWebhooks();
    const execution = await refundExecution(db);
    await recordOutcome(
      db,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "failed", error: "declined" },
      agent,
    );
    // Something else under our key: another amount.
    await post(
      `${s.url}/v1/refunds`,
      { ...refund, amount_cents: 9900, metadata: { execution_id: execution.id, task_id: execution.taskId } },
      { "Idempotency-Key": execution.idempotencyKey },
    );
    const applied = await receiveSandboxWebhook(db, (await webhooks())[0]!);
    expect(applied.result).toMatchObject({ applied: true, outcome: "effect_found_after_failure", status: "FAILED" });
    const alert = await openedAlert(
      db,
      await db.divergenceAlert.findUniqueOrThrow({ where: { id: applied.result.alert_id } }),
    );
    expect(alert).toMatchObject({
      kind: "effect_found_after_failure",
      executionId: execution.id,
      internal: { execution_status: "FAILED" },
      external: { source: "sandbox" },
    });
  });

  it("a body that is not a sandbox event is refused; an event about an unknown execution is recorded as such", async () => {
    expect((await failure(receiveSandboxWebhook(db, { id: "evt_x", type: "refund.created" }))).code).toBe(
      "validation_failed",
    );
    const stranger = {
      id: "evt_stranger",
      type: "refund.succeeded",
      created_at: new Date().toISOString(),
      data: {
        id: "re_x",
        status: "succeeded",
        amount_cents: 1,
        currency: "usd",
        charge_id: "c",
        customer_id: "u",
        metadata: {},
        idempotency_key: "not-ours",
        created_at: new Date().toISOString(),
      },
    };
    expect((await receiveSandboxWebhook(db, stranger)).result).toEqual({
      applied: false,
      outcome: "unknown_execution",
    });
  });
});

describe("outbox", () => {
  const own = useTestDatabase();

  it("two dispatchers racing deliver every message, none twice", async () => {
    await own.$transaction(async (tx) => {
      for (let i = 0; i < 40; i++)
        await enqueueOutbox(tx, { task_id: `task_${i}`, topic: "execution.reconciled", payload: { i } });
    });
    const seen: string[] = [];
    const deliver = async (m: OutboxMessageView) => {
      await sleepMs(1);
      seen.push(m.id);
    };
    const rounds = await Promise.all([1, 2, 3, 4].map(() => dispatchOutbox(own, deliver, { limit: 15 })));
    const again = await Promise.all([dispatchOutbox(own, deliver), dispatchOutbox(own, deliver)]);
    expect(seen).toHaveLength(40);
    expect(new Set(seen).size).toBe(40);
    expect([...rounds, ...again].reduce((n, r) => n + r.delivered, 0)).toBe(40);
    expect(await own.outboxMessage.count({ where: { deliveredAt: null } })).toBe(0);
    expect((await dispatchOutbox(own, deliver)).claimed).toBe(0);
  });

  /** The claim or backoff window of a message has passed: time moves on in the database, not in a sleep that a loaded machine can outlast. */
  const expire = (id: string) => own.$executeRaw`UPDATE outbox_messages SET available_at = now() WHERE id = ${id}`;
  const availableIn = async (id: string) =>
    (await own.outboxMessage.findUniqueOrThrow({ where: { id } })).availableAt.getTime() - Date.now();

  it("a failed delivery is kept with its error and retried after a backoff: at least once", async () => {
    const id = await own.$transaction((tx) =>
      enqueueOutbox(tx, { topic: "review.opened", payload: { review_id: "rev_1" } }),
    );
    let calls = 0;
    const flaky = async () => {
      if (++calls === 1) throw new Error("subscriber answered 503");
    };
    expect(await dispatchOutbox(own, flaky, { backoffBaseMs: 60_000 })).toMatchObject({
      claimed: 1,
      delivered: 0,
      failed: 1,
    });
    expect(await own.outboxMessage.findUniqueOrThrow({ where: { id } })).toMatchObject({
      attempts: 1,
      lastError: "subscriber answered 503",
      deliveredAt: null,
    });
    expect(await availableIn(id)).toBeGreaterThan(50_000);
    expect((await dispatchOutbox(own, flaky)).claimed).toBe(0);
    await expire(id);
    expect(await dispatchOutbox(own, flaky)).toMatchObject({ claimed: 1, delivered: 1 });
    expect(await own.outboxMessage.findUniqueOrThrow({ where: { id } })).toMatchObject({
      attempts: 2,
      lastError: null,
    });
    expect(calls).toBe(2);
  });

  it("a dispatcher that dies mid-delivery leaves its claim to expire; the message is delivered again", async () => {
    const id = await own.$transaction((tx) => enqueueOutbox(tx, { topic: "review.decided", payload: {} }));
    const delivered: string[] = [];
    // Claimed, then "dies": its delivery never completes.
    let release!: () => void;
    let claimed!: () => void;
    const claimedNow = new Promise<void>((resolve) => (claimed = resolve));
    const stuck = dispatchOutbox(
      own,
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
          claimed();
        }),
      { claimMs: 60_000 },
    );
    await claimedNow;
    expect(await availableIn(id)).toBeGreaterThan(50_000);
    expect((await dispatchOutbox(own, async (m) => void delivered.push(m.id))).claimed).toBe(0);
    await expire(id);
    expect(await dispatchOutbox(own, async (m) => void delivered.push(m.id))).toMatchObject({
      claimed: 1,
      delivered: 1,
    });
    expect(delivered).toEqual([id]);
    const first = (await own.outboxMessage.findUniqueOrThrow({ where: { id } })).deliveredAt;
    release();
    // The late first dispatcher finds it delivered already: no error, and delivered_at stays the first one.
    await stuck;
    expect(await own.outboxMessage.findUniqueOrThrow({ where: { id } })).toMatchObject({
      attempts: 2,
      deliveredAt: first,
    });
  });

  it("the webhook deliverer posts each message with its id as Idempotency-Key; a non-2xx is a failure", async () => {
    const ok = await receiver();
    const deliver = createWebhookDeliverer(ok.url, outboxSecret);
    const message: OutboxMessageView = {
      id: "out_1",
      taskId: "task_1",
      topic: "review.opened",
      payload: { review_id: "rev_1" },
      attempts: 1,
      createdAt: new Date(),
    };
    await deliver(message);
    expect(ok.received[0]?.headers["idempotency-key"]).toBe("out_1");
    expect(JSON.parse(ok.received[0]!.body)).toMatchObject({
      id: "out_1",
      topic: "review.opened",
      task_id: "task_1",
      payload: { review_id: "rev_1" },
      attempt: 1,
    });

    const down = await receiver((_r, res) => {
      res.statusCode = 500;
      res.end("no");
    });
    await expect(createWebhookDeliverer(down.url, outboxSecret)(message)).rejects.toThrow("subscriber answered 500");
    await expect(createWebhookDeliverer("http://user:secret@127.0.0.1:2/hook", outboxSecret)(message)).rejects.toThrow(
      /^subscriber unreachable/,
    );
    await expect(
      createWebhookDeliverer("http://user:secret@127.0.0.1:2/hook", outboxSecret)(message),
    ).rejects.not.toThrow(/secret/);
  });

  it("signs each delivery so that a receiver verifies it as it verifies the sandbox's webhooks (issue 11)", async () => {
    const ok = await receiver();
    const message: OutboxMessageView = {
      id: "out_2",
      taskId: null,
      topic: "task.completed",
      payload: { task_id: "t" },
      attempts: 3,
      createdAt: new Date(),
    };
    await createWebhookDeliverer(ok.url, outboxSecret)(message);
    const { headers, body } = ok.received[0]!;
    const header = headers["verity-signature"] as string | undefined;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature({ secret: outboxSecret, header: header ?? null, body })).toBe(true);
    // Another secret, an edited body, or an old delivery replayed: refused.
    expect(verifyWebhookSignature({ secret: "x".repeat(32), header: header ?? null, body })).toBe(false);
    expect(verifyWebhookSignature({ secret: outboxSecret, header: header ?? null, body: body.replace("t", "T") })).toBe(
      false,
    );
    const t = Number(/t=(\d+)/.exec(header!)![1]);
    expect(verifyWebhookSignature({ secret: outboxSecret, header: header ?? null, body, nowSeconds: t + 3600 })).toBe(
      false,
    );
  });
});
