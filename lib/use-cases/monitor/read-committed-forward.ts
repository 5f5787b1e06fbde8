import { z } from "zod";
import { Prisma } from "@/lib/generated/prisma/client";
import type { PassContext } from "@/lib/use-cases/monitor/monitor-pass-context";

/**
 * (xid, id) of the last row read from an append-only source. `at` is the
 * cursor of versions before the xid column: a first pass after the upgrade
 * skips what that cursor had passed, then the cursor is (xid, id) only.
 */
export const CommitCursorSchema = z.object({
  xid: z
    .string()
    .regex(/^[0-9]+$/)
    .nullable()
    .default(null),
  id: z.string().nullable(),
  at: z.string().nullable().default(null),
});
export type CommitCursor = z.infer<typeof CommitCursorSchema>;
export const emptyCommitCursor: CommitCursor = { xid: null, id: null, at: null };

/**
 * The oldest transaction id still running in this database (or prepared
 * there), as a 64-bit xid8 number; the next id to be assigned when none is.
 * pg_snapshot_xmin would do, but it is cluster-wide: a long transaction in
 * another database on a shared server would hold these checks back for its
 * whole length. pg_stat_activity gives 32-bit xids: each is placed in the
 * epoch of the snapshot's next id (or the one before, if it is above it).
 * Only the application's role writes these tables, and its own sessions'
 * xids are always visible to it.
 */
const committedHorizonSql = Prisma.sql`
  WITH snap AS (SELECT (pg_snapshot_xmax(pg_current_snapshot())::text)::bigint AS next),
       running AS (
         SELECT backend_xid::text::bigint AS x FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL
         UNION ALL
         SELECT transaction::text::bigint FROM pg_prepared_xacts WHERE database = current_database())
  SELECT coalesce(min(CASE WHEN r.x <= s.next % 4294967296 THEN (s.next / 4294967296) * 4294967296 + r.x
                           ELSE (s.next / 4294967296 - 1) * 4294967296 + r.x END), s.next)
    FROM snap s LEFT JOIN running r ON true
   GROUP BY s.next`;

/**
 * The next rows of an append-only table in commit-safe order. Ids and
 * timestamps are taken before commit, so a row can commit after a later
 * one was read: a cursor on (at, id) would pass it for good (and a row of
 * the same millisecond with a smaller random id too). Instead each row
 * carries its writing transaction's id, and only rows whose transaction is
 * older than every transaction still running in this database are read
 * (`committedHorizonSql`): that set is final, so reading it in (xid, id)
 * order and resuming after the last row read examines every row exactly
 * once. A row of a transaction still open waits for a later pass.
 */
export async function readCommittedForward(
  ctx: Pick<PassContext, "db" | "batch">,
  table: "write_conflicts" | "checkpoint_restores",
  timeColumn: "at" | "created_at",
  cursor: CommitCursor,
): Promise<{ rows: { id: string }[]; next: CommitCursor }> {
  const source = Prisma.raw(table);
  const at = Prisma.raw(timeColumn);
  const legacy =
    cursor.xid === null && cursor.at && cursor.id
      ? Prisma.sql`AND (${at}, id) > (${new Date(cursor.at)}::timestamptz, ${cursor.id})`
      : Prisma.empty;
  const after =
    cursor.xid !== null && cursor.id ? Prisma.sql`AND (xid, id) > (${cursor.xid}::bigint, ${cursor.id})` : Prisma.empty;
  const rows = await ctx.db.$queryRaw<{ id: string; xid: bigint | string }[]>`
    SELECT id, xid FROM ${source}
     WHERE xid < (${committedHorizonSql}) ${after} ${legacy}
     ORDER BY xid, id
     LIMIT ${ctx.batch}`;
  const last = rows[rows.length - 1];
  return { rows, next: last ? { xid: String(last.xid), id: last.id, at: null } : cursor };
}
