import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { EffectLookup as LookupRow, Execution, Prisma } from "@/lib/generated/prisma/client";
import type { Actor } from "@/lib/model/actor";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { openJson, sealJson } from "@/lib/stores/field-encryption";

/**
 * The owner of `effect_lookups`: the questions a `worker`-reconciled tool's
 * workers answer. One lookup per attempt of a call (id `lookup:<attempt id>`,
 * so queueing it twice is one row); every move is a CAS on `version` with
 * its audit entry:
 *
 *   QUEUED ──claim──▶ CLAIMED ──answer (its fencing token)──▶ ANSWERED
 *      ▲                 │ lease expired: claimable again (a greater token)
 *      └─────────────────┘
 *   QUEUED | CLAIMED past deadline_at ──▶ EXPIRED (the execution goes to people)
 *
 * A worker killed while holding a lookup simply stops renewing it; its lease
 * runs out and the next claim takes it with a greater fencing token, so a
 * late answer from the dead worker's token is refused.
 *
 * A worker's answer (the provider's record and evidence) is sealed at rest
 * (docs/encryption.md); every row this module returns has it opened.
 */

export type LookupAnswer =
  | { result: "found"; record: Record<string, unknown>; evidence?: Record<string, unknown> }
  | { result: "not_found"; evidence?: Record<string, unknown> }
  | { result: "unknown"; reason?: string };

/** Where a lookup's answer is sealed: the context of its envelope. */
function answerContext(lookupId: string): string {
  return `effect_lookups.answer:${lookupId}`;
}

/** The row with its answer opened: the engine reconciles by it, so an answer that does not open fails the read. */
async function opened(db: Db | Tx, row: LookupRow): Promise<LookupRow>;
async function opened(db: Db | Tx, row: LookupRow | null): Promise<LookupRow | null>;
async function opened(db: Db | Tx, row: LookupRow | null): Promise<LookupRow | null> {
  if (!row || row.answer === null) return row;
  return { ...row, answer: (await openJson(db, row.answer, answerContext(row.id))) as Prisma.JsonValue };
}

/** The lookup of the execution's current attempt. */
export function lookupIdOf(execution: Pick<Execution, "attemptId">): string {
  return `lookup:${execution.attemptId}`;
}

export async function getLookupOfAttempt(
  db: Db | Tx,
  execution: Pick<Execution, "attemptId">,
): Promise<LookupRow | null> {
  return opened(db, await db.effectLookup.findUnique({ where: { id: lookupIdOf(execution) } }));
}

export async function getLookupOrThrow(db: Db | Tx, id: string): Promise<LookupRow> {
  const row = await db.effectLookup.findUnique({ where: { id } });
  if (!row) throw new AppError("not_found", `Lookup ${id} does not exist.`);
  return opened(db, row);
}

/** Queues the question for the attempt (once: a second call returns the first row). */
export async function queueLookup(db: Db, execution: Execution, deadlineAt: Date, actor: Actor): Promise<LookupRow> {
  const id = lookupIdOf(execution);
  return db.$transaction(async (tx) => {
    const [created] = await tx.$queryRaw<Array<{ id: string }>>`
      INSERT INTO effect_lookups (id, execution_id, tool, idempotency_key, status, version, deadline_at)
      VALUES (${id}, ${execution.id}, ${execution.tool}, ${execution.idempotencyKey}, 'QUEUED', 1, ${deadlineAt})
      ON CONFLICT (id) DO NOTHING
      RETURNING id`;
    if (created)
      await appendAuditEntry(tx, {
        action: "lookup.queued",
        actor,
        subject: { type: "effect_lookup", id },
        taskId: execution.taskId,
        details: {
          execution_id: execution.id,
          tool: execution.tool,
          idempotency_key: execution.idempotencyKey,
          deadline_at: deadlineAt.toISOString(),
        },
      });
    return opened(tx, await tx.effectLookup.findUniqueOrThrow({ where: { id } }));
  });
}

/**
 * The oldest open lookup of the tool for a worker: queued, or claimed under
 * a lease that has run out. CAS on the version, so of two workers claiming
 * at once one gets it and the other the next one (or nothing).
 */
export async function claimOldestLookup(
  db: Db,
  tool: string,
  actor: Actor,
  leaseMs: number,
  now: Date = new Date(),
): Promise<LookupRow | null> {
  for (let tries = 0; tries < 5; tries++) {
    const candidate = await db.effectLookup.findFirst({
      where: {
        tool,
        deadlineAt: { gt: now },
        OR: [{ status: "QUEUED" }, { status: "CLAIMED", leaseExpiresAt: { lt: now } }],
      },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
    if (!candidate) return null;
    const claimed = await db.$transaction(async (tx) => {
      const { count } = await tx.effectLookup.updateMany({
        where: { id: candidate.id, version: candidate.version },
        data: {
          status: "CLAIMED",
          claimedBy: actor.identity,
          fencingToken: candidate.fencingToken + 1,
          leaseExpiresAt: new Date(now.getTime() + leaseMs),
          version: candidate.version + 1,
        },
      });
      if (count === 0) return null;
      await appendAuditEntry(tx, {
        action: "lookup.claimed",
        actor,
        subject: { type: "effect_lookup", id: candidate.id },
        details: {
          execution_id: candidate.executionId,
          fencing_token: candidate.fencingToken + 1,
          // A claim of a lease that ran out says whose: the worker presumed dead.
          ...(candidate.status === "CLAIMED" ? { taken_from: candidate.claimedBy } : {}),
        },
      });
      return opened(tx, await tx.effectLookup.findUniqueOrThrow({ where: { id: candidate.id } }));
    });
    if (claimed) return claimed;
  }
  return null;
}

/**
 * The claiming worker's answer. Refused unless the lookup is CLAIMED under
 * exactly this fencing token by this identity: a worker whose lease ran out
 * and was claimed by another cannot overwrite the new holder's answer.
 */
export async function answerLookupRow(
  tx: Tx,
  row: LookupRow,
  fencingToken: number,
  answer: LookupAnswer,
  actor: Actor,
): Promise<LookupRow> {
  if (row.status !== "CLAIMED" || row.fencingToken !== fencingToken || row.claimedBy !== actor.identity) {
    throw new AppError(
      "lease_conflict",
      `Lookup ${row.id} is ${row.status}${row.status === "CLAIMED" ? ` by ${row.claimedBy} under fencing token ${row.fencingToken}` : ""}, not claimed by you under token ${fencingToken}: your answer is not taken.`,
      { violations: [{ invariant: "fencing_token_current", message: `lookup fencing token is ${row.fencingToken}` }] },
    );
  }
  const now = new Date();
  const { count } = await tx.effectLookup.updateMany({
    where: { id: row.id, version: row.version },
    data: {
      status: "ANSWERED",
      answer: (await sealJson(tx, answerContext(row.id), answer)) as unknown as Prisma.InputJsonValue,
      answeredBy: actor.identity,
      answeredAt: now,
      version: row.version + 1,
    },
  });
  if (count === 0)
    throw new AppError("version_conflict", `Lookup ${row.id} changed while it was being answered; claim it again.`);
  await appendAuditEntry(tx, {
    action: "lookup.answered",
    actor,
    subject: { type: "effect_lookup", id: row.id },
    details: { execution_id: row.executionId, fencing_token: fencingToken, result: answer.result },
  });
  return opened(tx, await tx.effectLookup.findUniqueOrThrow({ where: { id: row.id } }));
}

/** Past its deadline with no answer: EXPIRED (returns the row as it is after; unchanged if it was answered meanwhile). */
export async function expireLookup(db: Db, row: LookupRow, actor: Actor): Promise<LookupRow> {
  return db.$transaction(async (tx) => {
    const { count } = await tx.effectLookup.updateMany({
      where: { id: row.id, version: row.version, status: { in: ["QUEUED", "CLAIMED"] } },
      data: { status: "EXPIRED", version: row.version + 1 },
    });
    if (count === 1)
      await appendAuditEntry(tx, {
        action: "lookup.expired",
        actor,
        subject: { type: "effect_lookup", id: row.id },
        details: {
          execution_id: row.executionId,
          deadline_at: row.deadlineAt.toISOString(),
          claimed_by: row.claimedBy,
        },
      });
    return opened(tx, await tx.effectLookup.findUniqueOrThrow({ where: { id: row.id } }));
  });
}

/** Retention (lib/use-cases/retention/apply-task-retention.ts): the lookups of a finished task's executions, before those executions go. */
export async function deleteLookupsOfTask(tx: Tx, taskId: string): Promise<{ effect_lookups: number }> {
  const rows = await tx.$executeRaw`
    DELETE FROM effect_lookups WHERE execution_id IN (SELECT id FROM executions WHERE task_id = ${taskId})`;
  return { effect_lookups: rows };
}
