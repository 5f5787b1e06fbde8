import { createHmac } from "node:crypto";
import { z } from "zod";
import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { Prisma } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { parseOrThrow } from "@/lib/core/validation";
import { boundedJson } from "@/lib/core/json-bounds";
import { sealJson } from "@/lib/stores/field-encryption";

/**
 * The owner of `inbox_events` and `outbox_messages`.
 *
 * Inbox: an inbound event (a provider's webhook, a message) is applied at most
 * once. Its row is inserted first, in the same transaction as the changes it
 * causes, so "recorded as received" and "applied" cannot come apart: a crash
 * rolls both back and the sender's retry applies it; a duplicate finds the row
 * and gets the first result back.
 *
 * Outbox: a state change that should be announced writes its message in its
 * own transaction (enqueueOutbox); the dispatcher delivers it afterwards, at
 * least once. A message is never lost by a crash, and never announces a change
 * that rolled back.
 */

const jsonObject = boundedJson(z.record(z.string(), z.unknown()));

export const InboundEventSchema = z.strictObject({
  /** The sender's id of the event: the deduplication key. */
  event_id: z.string().min(1).max(255),
  source: z.string().min(1).max(64),
  type: z.string().min(1).max(128),
  task_id: z.string().min(1).max(128).optional(),
  payload: jsonObject,
});
export type InboundEvent = z.infer<typeof InboundEventSchema>;

export interface ReceiveResult<R> {
  /** True when the event had been received before: nothing was applied this time. */
  duplicate: boolean;
  /** The result of the first (and only) application, read back from the inbox row on a duplicate. */
  result: R;
}

/**
 * Applies `apply` once per event id. `apply` must write through the `tx` it
 * is given (never through `db`, which would escape the transaction) and
 * return JSON: that is what a duplicate gets back. If `apply` throws, nothing
 * is recorded and a redelivery tries again; an event that can never apply
 * (it names nothing we know) should return a result saying so instead, so
 * that its retries stop.
 */
export async function receiveEvent<R>(
  db: Db,
  raw: InboundEvent,
  apply: (tx: Tx) => Promise<R>,
): Promise<ReceiveResult<R>> {
  const event = parseOrThrow(InboundEventSchema, raw);
  return db.$transaction(async (tx) => {
    // The body as received is a provider's payload (a refund's customer and
    // amount): confidential, sealed whole like every provider payload
    // (docs/encryption.md). Nothing reads it back but a person auditing the
    // inbox; the receipt (`result`) is what a redelivery gets.
    const payload = await sealJson(tx, `inbox_events.payload:${event.event_id}`, event.payload);
    // ON CONFLICT DO NOTHING rather than catching a unique violation: a failed
    // statement would abort the transaction. On PostgreSQL a concurrent
    // duplicate waits here for the first one's commit, then sees its row.
    const inserted = await tx.$executeRaw`
      INSERT INTO inbox_events (event_id, source, type, task_id, payload)
      VALUES (${event.event_id}, ${event.source}, ${event.type}, ${event.task_id ?? null}, ${JSON.stringify(payload)}::jsonb)
      ON CONFLICT (tenant_id, event_id) DO NOTHING`;
    if (inserted === 0) {
      const first = await tx.inboxEvent.findFirstOrThrow({ where: { eventId: event.event_id } });
      if (first.source !== event.source || first.type !== event.type) {
        throw new AppError(
          "idempotency_conflict",
          `Event id ${event.event_id} was already received as a ${first.source} ${first.type} event.`,
        );
      }
      return { duplicate: true, result: first.result as R };
    }
    const result = await apply(tx);
    await tx.inboxEvent.updateMany({ where: { eventId: event.event_id }, data: { result: toJson(result) } });
    return { duplicate: false, result };
  });
}

function toJson(value: unknown): Prisma.InputJsonValue | typeof Prisma.JsonNull {
  return value === undefined || value === null
    ? Prisma.JsonNull
    : (JSON.parse(JSON.stringify(value)) as Prisma.InputJsonValue);
}

/** What Verity announces. Subscribers get the topic, the task and a small payload of ids and statuses. */
export type OutboxTopic =
  | "execution.reconciled" // the reconciler corrected an execution from the provider's records
  | "execution.settled_by_event" // a provider's event settled an execution
  | "review.opened" // an irreversible action is frozen, waiting for people
  | "review.decided" // a person decided (one approval of two counts as a decision)
  | "divergence.raised"; // internal state and a provider disagree

export interface OutboxMessageView {
  id: string;
  taskId: string | null;
  topic: string;
  payload: unknown;
  /** Delivery attempts so far, this one included. */
  attempts: number;
  createdAt: Date;
}

/** Writes a message in the caller's transaction: it exists if and only if the change it announces committed. */
export async function enqueueOutbox(
  tx: Tx,
  input: { task_id?: string | null; topic: OutboxTopic; payload: Record<string, unknown> },
): Promise<string> {
  const id = newId("out");
  await tx.outboxMessage.create({
    data: {
      id,
      taskId: input.task_id ?? null,
      topic: input.topic,
      payload: toJson(input.payload) as Prisma.InputJsonValue,
    },
  });
  return id;
}

export type Deliver = (message: OutboxMessageView) => Promise<void>;

export interface DispatchOptions {
  limit?: number;
  /**
   * How long a claimed message stays invisible to other dispatchers. A
   * dispatcher that dies mid-delivery leaves its claim to expire, and the
   * message is delivered again: at least once, never lost.
   */
  claimMs?: number;
  /** Retry delay after a failed delivery: base × 2^(attempts−1), capped. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

export interface DispatchSummary {
  claimed: number;
  delivered: number;
  failed: number;
  errors: Array<{ id: string; error: string }>;
}

type ClaimedRow = {
  id: string;
  task_id: string | null;
  topic: string;
  payload: unknown;
  attempts: number;
  created_at: Date;
};

/**
 * Delivers due messages. Claiming is one statement: the inner SELECT … FOR
 * UPDATE SKIP LOCKED picks rows no other dispatcher is claiming right now,
 * and the UPDATE pushes their `available_at` past the claim window in the
 * same breath, so two dispatchers (two processes, or two ticks) never take
 * the same message while its claim is live.
 */
export async function dispatchOutbox(
  db: Db,
  deliver: Deliver,
  options: DispatchOptions = {},
): Promise<DispatchSummary> {
  const limit = options.limit ?? 20;
  const claimMs = options.claimMs ?? 30_000;
  const backoffBaseMs = options.backoffBaseMs ?? 1_000;
  const backoffMaxMs = options.backoffMaxMs ?? 300_000;
  const claimed = await db.$queryRaw<ClaimedRow[]>`
    UPDATE outbox_messages
       SET attempts = attempts + 1, available_at = now() + (${claimMs}::int * interval '1 millisecond')
     WHERE id IN (
       SELECT id FROM outbox_messages
        WHERE delivered_at IS NULL AND available_at <= now()
        ORDER BY available_at, id
        LIMIT ${limit}::int
          FOR UPDATE SKIP LOCKED)
    RETURNING id, task_id, topic, payload, attempts, created_at`;
  claimed.sort((a, b) => (a.id < b.id ? -1 : 1));
  const summary: DispatchSummary = { claimed: claimed.length, delivered: 0, failed: 0, errors: [] };
  for (const row of claimed) {
    const message: OutboxMessageView = {
      id: row.id,
      taskId: row.task_id,
      topic: row.topic,
      payload: row.payload,
      attempts: row.attempts,
      createdAt: new Date(row.created_at),
    };
    try {
      await deliver(message);
    } catch (error) {
      const text = describeDeliveryError(error);
      const delayMs = Math.min(backoffBaseMs * 2 ** Math.max(0, row.attempts - 1), backoffMaxMs);
      await db.$executeRaw`
        UPDATE outbox_messages SET last_error = ${text}, available_at = now() + (${delayMs}::int * interval '1 millisecond')
         WHERE id = ${row.id} AND delivered_at IS NULL`;
      summary.failed++;
      summary.errors.push({ id: row.id, error: text });
      continue;
    }
    await db.$executeRaw`UPDATE outbox_messages SET delivered_at = now(), last_error = NULL WHERE id = ${row.id} AND delivered_at IS NULL`;
    summary.delivered++;
  }
  return summary;
}

/** The error as stored and logged: its message only (no stack, no request), bounded. */
function describeDeliveryError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, 500);
}

/**
 * Delivery to an HTTP subscriber: a JSON POST per message, with the message id
 * as Idempotency-Key (at least once means the subscriber sees duplicates after
 * a lost answer, and deduplicates by that id). Any non-2xx is a failure.
 *
 * Each delivery is signed as the sandbox signs its webhooks:
 * `Verity-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`
 * under VERITY_OUTBOX_SECRET, so the subscriber can tell Verity's
 * announcements from anyone's POST and refuse an old one replayed
 * (lib/connectors/sandbox/webhook-signature.ts verifyWebhookSignature checks
 * exactly this). Each attempt is signed afresh: a retry carries a new time.
 */
export function createWebhookDeliverer(url: string, secret: string, options: { timeoutMs?: number } = {}): Deliver {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return async (message) => {
    let res: Response;
    const body = JSON.stringify({
      id: message.id,
      topic: message.topic,
      task_id: message.taskId,
      payload: message.payload,
      created_at: message.createdAt.toISOString(),
      attempt: message.attempts,
    });
    const t = Math.floor(Date.now() / 1000);
    const signature = `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Idempotency-Key": message.id,
          "User-Agent": "verity-outbox",
          "Verity-Signature": signature,
        },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      // The subscriber's URL may carry credentials: name the failure, not the URL.
      const cause = (error as { cause?: { code?: string } } | null)?.cause?.code;
      throw new Error(
        `subscriber unreachable${cause ? ` (${cause})` : error instanceof Error && error.name === "TimeoutError" ? ` (no answer within ${timeoutMs} ms)` : ""}`,
      );
    }
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`subscriber answered ${res.status}`);
  };
}

/**
 * Retention (lib/use-cases/retention/apply-task-retention.ts): a finished
 * task's inbound events and delivered announcements. Only a task with no
 * undelivered message is ever deleted (the use case checks it), so nothing
 * owed to a subscriber is lost.
 */
export async function deleteMessagesOfTask(
  tx: Tx,
  taskId: string,
): Promise<{ inbox_events: number; outbox_messages: number }> {
  const inbox_events = (await tx.inboxEvent.deleteMany({ where: { taskId } })).count;
  const outbox_messages = (await tx.outboxMessage.deleteMany({ where: { taskId } })).count;
  return { inbox_events, outbox_messages };
}
