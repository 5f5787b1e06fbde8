import type { Tx } from "@/lib/db/client";

/**
 * The owner of `task_retention_walks`: where the connection's tenant's
 * task-data retention walk stopped (docs/cost-growth.md, "The retention
 * run"). A run reads the tasks past its cutoff in `(updated_at, id)` order
 * for a bounded number of windows; the next run resumes after the position
 * this one saved, and a walk that reached the cutoff starts again from the
 * oldest. Read and written only inside the run's transaction
 * (lib/use-cases/retention/apply-task-retention.ts), so the position moves
 * exactly when the run's deletions commit: a crash loses neither, and a run
 * repeated from an older position only reads again what it had read. The
 * position may be a task the run deleted: its id and last update, which the
 * run's audit entry names too, nothing it held.
 */

/** A point of the walk: the tasks after it, in `(updated_at, id)` order, come next. */
export interface WalkPosition {
  updatedAt: Date;
  id: string;
}

/** The saved position, or null: start from the oldest. */
export async function readRetentionWalk(tx: Tx): Promise<WalkPosition | null> {
  const [row] = await tx.$queryRaw<Array<{ after_updated_at: Date | null; after_id: string | null }>>`
    SELECT after_updated_at, after_id FROM task_retention_walks`;
  return row?.after_updated_at && row.after_id ? { updatedAt: row.after_updated_at, id: row.after_id } : null;
}

/**
 * Saves where the next run resumes (null: from the oldest), written only when
 * it moved. Runs racing each other each save where they stopped, the last to
 * commit winning: either is a point the walk may resume from.
 */
export async function saveRetentionWalk(tx: Tx, from: WalkPosition | null, to: WalkPosition | null): Promise<void> {
  if (from?.id === to?.id && from?.updatedAt.getTime() === to?.updatedAt.getTime()) return;
  await tx.$executeRaw`
    INSERT INTO task_retention_walks (after_updated_at, after_id)
    VALUES (${to ? to.updatedAt.toISOString() : null}::timestamptz, ${to?.id ?? null})
    ON CONFLICT (tenant_id) DO UPDATE
       SET after_updated_at = EXCLUDED.after_updated_at, after_id = EXCLUDED.after_id, updated_at = CURRENT_TIMESTAMP`;
}
