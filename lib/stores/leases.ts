import { z } from "zod";
import { directQuery, type Db, type Tx } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { AppError } from "@/lib/core/errors";
import { newId } from "@/lib/core/ids";
import type { Actor } from "@/lib/model/actor";
import { describeLease, leaseViewOf, type LeaseView } from "@/lib/model/leases/lease-rules";

export { leaseRefusal, type LeaseView } from "@/lib/model/leases/lease-rules";
import { clientIdSchema, parseOrThrow } from "@/lib/core/validation";

/**
 * The owner of the `leases` table: exclusive work on a task for a while, by
 * one worker PROCESS. Several processes may run under one agent identity
 * (two `refund-bot` workers), so a lease is never handed to "whoever has
 * this identity": every acquisition gets its own lease id and the next
 * fencing token, and the same identity acquiring again while its earlier
 * lease is live is refused like anyone else. The row is never deleted; a
 * worker that paused past its expiry and wakes up presents an older token,
 * and lib/stores/tasks/task-store.ts refuses its writes in the same statement as the
 * version check.
 */
export const LeaseRequestSchema = z.strictObject({
  ttl_seconds: z.number().int().min(1).max(3600).default(60),
  /**
   * The caller's own id for this acquisition (one per worker process and
   * task), so that an acquire whose answer was lost can be sent again and
   * get the same lease back instead of a conflict with itself.
   */
  lease_id: clientIdSchema.optional(),
});

type LeaseRow = {
  task_id: string;
  lease_id: string;
  holder: string;
  fencing_token: bigint | string;
  expires_at: Date;
  acquired_at: Date;
  renewed_at: Date;
};

function toView(row: LeaseRow): LeaseView {
  return {
    taskId: row.task_id,
    leaseId: row.lease_id,
    holder: row.holder,
    fencingToken: String(row.fencing_token),
    expiresAt: new Date(row.expires_at),
    acquiredAt: new Date(row.acquired_at),
    renewedAt: new Date(row.renewed_at),
  };
}

/**
 * Takes the lease when it is free or expired, always with a new lease id
 * and a greater fencing token. A retried acquire that names the live
 * lease's own `lease_id` (and holder) gets that lease back, renewed; any
 * other acquire while a lease is live is a conflict, the same identity's
 * included. One statement: two workers racing for it cannot both win.
 */
export async function acquireLease(db: Db | Tx, taskId: string, raw: unknown, actor: Actor): Promise<LeaseView> {
  const { ttl_seconds, lease_id } = parseOrThrow(LeaseRequestSchema, raw ?? {});
  const task = await db.task.findFirst({ where: { id: taskId }, select: { id: true } });
  if (!task) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  const leaseId = lease_id ?? newId("lease");
  const rows = await db.$queryRaw<LeaseRow[]>`
    INSERT INTO leases (task_id, lease_id, holder, fencing_token, expires_at, acquired_at, renewed_at)
    VALUES (${taskId}, ${leaseId}, ${actor.identity}, 1, now() + make_interval(secs => ${ttl_seconds}), now(), now())
    ON CONFLICT (tenant_id, task_id) DO UPDATE
       SET lease_id = EXCLUDED.lease_id,
           holder = EXCLUDED.holder,
           fencing_token = CASE WHEN leases.expires_at > now() THEN leases.fencing_token ELSE leases.fencing_token + 1 END,
           acquired_at = CASE WHEN leases.expires_at > now() THEN leases.acquired_at ELSE now() END,
           expires_at = EXCLUDED.expires_at,
           renewed_at = now()
     WHERE leases.expires_at <= now()
        OR (leases.lease_id = EXCLUDED.lease_id AND leases.holder = EXCLUDED.holder)
    RETURNING task_id, lease_id, holder, fencing_token, expires_at, acquired_at, renewed_at`;
  const row = rows[0];
  if (row) return toView(row);
  const held = await getLease(db, taskId);
  const yours = held?.holder === actor.identity;
  throw new AppError(
    "lease_conflict",
    held
      ? `Task ${taskId} is leased: ${describeLease(held)}.${yours ? " That is another process of your identity (or an earlier acquire of yours that named no lease_id): wait for it to release or expire." : ""}`
      : `Task ${taskId} is leased by another worker.`,
    {
      holder: held?.holder,
      fencingToken: held?.fencingToken,
      leaseId: held?.leaseId,
      expiresAt: held?.expiresAt.toISOString(),
    },
  );
}

/**
 * Takes the task's lease even while another identity holds it live (the
 * caller checked the take_over_leases scope): in one transaction, under the
 * lease row's lock, the holder's lease ends and the taker's begins with the
 * next fencing token, so the old holder's next write is refused by the task
 * CAS; and the audit log records who took it from whom, with both tokens, in
 * the same transaction. A lease that is free, expired or the taker's own by
 * the time the lock is held is acquired as usual (no take-over, no entry).
 */
export async function takeOverLease(
  db: Db,
  taskId: string,
  raw: unknown,
  actor: Actor,
): Promise<{ lease: LeaseView; takenFrom: LeaseView | null }> {
  const { ttl_seconds, lease_id } = parseOrThrow(LeaseRequestSchema, raw ?? {});
  return db.$transaction(async (tx) => {
    const held = await tx.$queryRaw<LeaseRow[]>`
      SELECT task_id, lease_id, holder, fencing_token, expires_at, acquired_at, renewed_at
        FROM leases WHERE task_id = ${taskId} AND expires_at > now() AND holder <> ${actor.identity}
         FOR UPDATE`;
    const previous = held[0] ? toView(held[0]) : null;
    if (!previous) return { lease: await acquireLease(tx, taskId, { ttl_seconds, lease_id }, actor), takenFrom: null };
    const rows = await tx.$queryRaw<LeaseRow[]>`
      UPDATE leases
         SET lease_id = ${lease_id ?? newId("lease")}, holder = ${actor.identity}, fencing_token = fencing_token + 1,
             acquired_at = now(), expires_at = now() + make_interval(secs => ${ttl_seconds}), renewed_at = now()
       WHERE task_id = ${taskId}
      RETURNING task_id, lease_id, holder, fencing_token, expires_at, acquired_at, renewed_at`;
    const lease = toView(rows[0]!);
    await appendAuditEntry(tx, {
      action: "lease.taken_over",
      actor,
      subject: { type: "task", id: taskId },
      taskId,
      details: {
        from: previous.holder,
        previous_lease_id: previous.leaseId,
        previous_fencing_token: previous.fencingToken,
        previous_expires_at: previous.expiresAt.toISOString(),
        lease_id: lease.leaseId,
        fencing_token: lease.fencingToken,
        expires_at: lease.expiresAt.toISOString(),
      },
    });
    return { lease, takenFrom: previous };
  });
}

/** Extends a live lease; refused when the token is no longer current. */
export async function renewLease(
  db: Db,
  taskId: string,
  fencingToken: string,
  raw: unknown,
  actor: Actor,
): Promise<LeaseView> {
  const { ttl_seconds } = parseOrThrow(LeaseRequestSchema, raw ?? {});
  const rows = await db.$queryRaw<LeaseRow[]>`
    UPDATE leases SET expires_at = now() + make_interval(secs => ${ttl_seconds}), renewed_at = now()
     WHERE task_id = ${taskId} AND holder = ${actor.identity} AND fencing_token = ${fencingToken}::bigint AND expires_at > now()
    RETURNING task_id, lease_id, holder, fencing_token, expires_at, acquired_at, renewed_at`;
  if (rows[0]) return toView(rows[0]);
  const held = await getLease(db, taskId);
  throw new AppError(
    "lease_conflict",
    `Fencing token ${fencingToken} is not a live lease of ${actor.identity} on task ${taskId}: ${held ? `the lease is ${describeLease(held)}` : "the task has no lease"}. Acquire the lease again.`,
    {
      holder: held?.holder,
      fencingToken: held?.fencingToken,
      leaseId: held?.leaseId,
      expiresAt: held?.expiresAt.toISOString(),
    },
  );
}

/** Ends a lease early (expiry now). The token stays, so the next holder gets a greater one. */
export async function releaseLease(db: Db, taskId: string, fencingToken: string, actor: Actor): Promise<void> {
  await db.$executeRaw`
    UPDATE leases SET expires_at = now()
     WHERE task_id = ${taskId} AND holder = ${actor.identity} AND fencing_token = ${fencingToken}::bigint AND expires_at > now()`;
}

/**
 * Ends the task's live lease in the caller's transaction and raises its
 * token, whoever holds it: a checkpoint restore rewrites the task under the
 * holder's feet, so the holder's next write with its old token is refused
 * (the CAS in lib/stores/tasks/task-store.ts checks token and expiry) and its renew
 * fails; it must read the task again and acquire a new lease. Null when no
 * lease was live.
 */
export async function fenceLeaseInTransaction(tx: Tx, taskId: string): Promise<LeaseView | null> {
  const rows = await tx.$queryRaw<LeaseRow[]>`
    UPDATE leases SET fencing_token = fencing_token + 1, expires_at = now()
     WHERE task_id = ${taskId} AND expires_at > now()
    RETURNING task_id, lease_id, holder, fencing_token, expires_at, acquired_at, renewed_at`;
  return rows[0] ? toView(rows[0]) : null;
}

/**
 * The task's lease row, read and held FOR SHARE until the caller's
 * transaction ends (a takeover or renewal waits for it): one statement for
 * the lock and the row (lib/use-cases/executions/lease-fencing.ts). Null when
 * the task never had a lease.
 */
export async function getLeaseForShare(tx: Db | Tx, taskId: string): Promise<LeaseView | null> {
  const [row] = await directQuery<LeaseRow>(
    tx,
    Prisma.sql`SELECT task_id, lease_id, holder, fencing_token::text AS fencing_token, expires_at, acquired_at, renewed_at
                 FROM leases WHERE task_id = ${taskId} FOR SHARE`,
    { prepare: "lease_for_share_row" },
  );
  return row ? toView(row) : null;
}

export async function getLease(db: Db | Tx, taskId: string): Promise<LeaseView | null> {
  const row = await db.lease.findFirst({ where: { taskId } });
  return row ? leaseViewOf(row) : null;
}

/**
 * Retention (lib/use-cases/retention/apply-task-retention.ts): a finished
 * task's lease row. The fencing token it kept dies with the task: a task
 * created again under the same id starts a new lease history, and no
 * write of the old one can reach it (its transitions are gone too).
 */
export async function deleteLeaseOfTask(tx: Tx, taskId: string): Promise<{ leases: number }> {
  return { leases: (await tx.lease.deleteMany({ where: { taskId } })).count };
}
