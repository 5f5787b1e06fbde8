import { z } from "zod";
import type { Db, Tx } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { Actor } from "@/lib/engine/tasks";
import { parseOrThrow } from "@/lib/engine/tasks";

/**
 * The owner of the `leases` table: exclusive work on a task for a while.
 * A lease row is never deleted; every acquisition takes the next fencing
 * token, so a worker that paused past its expiry and wakes up presents an
 * older token, and lib/engine/tasks.ts refuses its writes in the same
 * statement as the version check.
 */
export const LeaseRequestSchema = z.strictObject({
  ttl_seconds: z.number().int().min(1).max(3600).default(60),
});

export interface LeaseView {
  taskId: string;
  holder: string;
  fencingToken: string;
  expiresAt: Date;
  acquiredAt: Date;
  renewedAt: Date;
}

type LeaseRow = { task_id: string; holder: string; fencing_token: bigint | string; expires_at: Date; acquired_at: Date; renewed_at: Date };

function toView(row: LeaseRow): LeaseView {
  return {
    taskId: row.task_id,
    holder: row.holder,
    fencingToken: String(row.fencing_token),
    expiresAt: new Date(row.expires_at),
    acquiredAt: new Date(row.acquired_at),
    renewedAt: new Date(row.renewed_at),
  };
}

/**
 * Takes the lease when it is free, expired, or already ours (then renewed,
 * same token). One statement: two workers racing for it cannot both win.
 */
export async function acquireLease(db: Db, taskId: string, raw: unknown, actor: Actor): Promise<LeaseView> {
  const { ttl_seconds } = parseOrThrow(LeaseRequestSchema, raw ?? {});
  const task = await db.task.findUnique({ where: { id: taskId }, select: { id: true } });
  if (!task) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  const rows = await db.$queryRaw<LeaseRow[]>`
    INSERT INTO leases (task_id, holder, fencing_token, expires_at, acquired_at, renewed_at)
    VALUES (${taskId}, ${actor.identity}, 1, now() + make_interval(secs => ${ttl_seconds}), now(), now())
    ON CONFLICT (task_id) DO UPDATE
       SET holder = EXCLUDED.holder,
           fencing_token = CASE WHEN leases.holder = EXCLUDED.holder AND leases.expires_at > now()
                                THEN leases.fencing_token ELSE leases.fencing_token + 1 END,
           acquired_at = CASE WHEN leases.holder = EXCLUDED.holder AND leases.expires_at > now()
                              THEN leases.acquired_at ELSE now() END,
           expires_at = EXCLUDED.expires_at,
           renewed_at = now()
     WHERE leases.expires_at <= now() OR leases.holder = EXCLUDED.holder
    RETURNING task_id, holder, fencing_token, expires_at, acquired_at, renewed_at`;
  const row = rows[0];
  if (row) return toView(row);
  const held = await db.lease.findUnique({ where: { taskId } });
  throw new AppError(
    "lease_conflict",
    `Task ${taskId} is leased by ${held?.holder ?? "another worker"} until ${held?.expiresAt.toISOString() ?? "soon"}.`,
    { holder: held?.holder, expiresAt: held?.expiresAt.toISOString() },
  );
}

/** Extends a live lease; refused when the token is no longer current. */
export async function renewLease(db: Db, taskId: string, fencingToken: string, raw: unknown, actor: Actor): Promise<LeaseView> {
  const { ttl_seconds } = parseOrThrow(LeaseRequestSchema, raw ?? {});
  const rows = await db.$queryRaw<LeaseRow[]>`
    UPDATE leases SET expires_at = now() + make_interval(secs => ${ttl_seconds}), renewed_at = now()
     WHERE task_id = ${taskId} AND holder = ${actor.identity} AND fencing_token = ${fencingToken}::bigint AND expires_at > now()
    RETURNING task_id, holder, fencing_token, expires_at, acquired_at, renewed_at`;
  if (rows[0]) return toView(rows[0]);
  throw new AppError("lease_conflict", `Fencing token ${fencingToken} is not a live lease of ${actor.identity} on task ${taskId}; acquire the lease again.`);
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
 * (the CAS in lib/engine/tasks.ts checks token and expiry) and its renew
 * fails; it must read the task again and acquire a new lease. Null when no
 * lease was live.
 */
export async function fenceLeaseInTransaction(tx: Tx, taskId: string): Promise<LeaseView | null> {
  const rows = await tx.$queryRaw<LeaseRow[]>`
    UPDATE leases SET fencing_token = fencing_token + 1, expires_at = now()
     WHERE task_id = ${taskId} AND expires_at > now()
    RETURNING task_id, holder, fencing_token, expires_at, acquired_at, renewed_at`;
  return rows[0] ? toView(rows[0]) : null;
}

export async function getLease(db: Db, taskId: string): Promise<LeaseView | null> {
  const row = await db.lease.findUnique({ where: { taskId } });
  return row
    ? { taskId: row.taskId, holder: row.holder, fencingToken: String(row.fencingToken), expiresAt: row.expiresAt, acquiredAt: row.acquiredAt, renewedAt: row.renewedAt }
    : null;
}
