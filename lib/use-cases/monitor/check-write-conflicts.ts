import type { Db } from "@/lib/db/client";
import { staleVersionSeverity } from "@/lib/model/alerts/alert-kinds";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import type { RaiseAlertInput } from "@/lib/use-cases/alerts/divergence";
import { raiseViolation, type CheckReport, type PassContext } from "@/lib/use-cases/monitor/monitor-pass-context";
import { readCommittedForward, type CommitCursor } from "@/lib/use-cases/monitor/read-committed-forward";

/** Refused writes (write_conflicts, recorded by lib/stores/tasks/task-store.ts on the refusal path), read forward once each. */
export async function checkWriteConflicts(
  ctx: PassContext,
  report: CheckReport,
  cursor: CommitCursor,
): Promise<CommitCursor> {
  const { rows, next } = await readCommittedForward(ctx, "write_conflicts", "at", cursor);
  const found = await ctx.db.writeConflict.findMany({ where: { id: { in: rows.map((r) => r.id) } } });
  const byId = new Map(found.map((r) => [r.id, r]));
  for (const { id } of rows) {
    const row = byId.get(id)!;
    report.examined++;
    const finding = await judgeWriteConflict(ctx.db, row);
    if (finding) await raiseViolation(ctx, report, finding);
  }
  return next;
}

type WriteConflictRow = Awaited<ReturnType<Db["writeConflict"]["findFirstOrThrow"]>>;

/**
 * Every fencing refusal is an alert: a worker whose lease was taken over
 * kept working (a zombie), and may be acting on the outside world on a view
 * that stopped being its own. A version refusal is ordinary contention —
 * two writers, one wins, the other reads again — and is alerted only when
 * the writer's view had stopped being true in a way that matters: the task
 * had since ended (the spec's worker A writing RUNNING over B's COMPLETED),
 * or moved to another status than the one the writer read it in.
 */
async function judgeWriteConflict(db: Db, row: WriteConflictRow): Promise<RaiseAlertInput | null> {
  const internal = {
    writer: row.actor,
    expected_version: row.expectedVersion,
    fencing_token: row.fencingToken,
    refused_at: row.at,
  };
  if (row.kind === "fencing") {
    const lease = await db.lease.findFirst({ where: { taskId: row.taskId } });
    return {
      taskId: row.taskId,
      kind: "stale_write",
      message: `${row.actor} wrote to task ${row.taskId} with fencing token ${row.fencingToken ?? "(none)"}, which is not the current lease: a worker kept working after losing its lease. The write was refused.`,
      internal,
      external: {
        kind: "fencing",
        current_lease: lease
          ? { holder: lease.holder, fencing_token: lease.fencingToken.toString(), expires_at: lease.expiresAt }
          : null,
      },
      fingerprint: `stale_write:fencing:${row.taskId}:${row.actor}`,
    };
  }
  if (row.kind !== "version" || row.currentStatus === null || row.currentVersion === null) return null;
  const [seen, task] = await Promise.all([
    db.transition.findFirst({
      where: { taskId: row.taskId, toVersion: row.expectedVersion },
      select: { toStatus: true },
    }),
    db.task.findFirst({ where: { id: row.taskId }, select: { workflowDigest: true } }),
  ]);
  const def = task ? getWorkflowByDigest(task.workflowDigest) : undefined;
  const ended = !!def?.states[row.currentStatus]?.terminal;
  const moved = seen !== null && seen.toStatus !== row.currentStatus;
  if (!ended && !moved) return null;
  const why = ended
    ? `the task had already ended ${row.currentStatus} (version ${row.currentVersion})`
    : `the task had moved from ${seen?.toStatus} to ${row.currentStatus} (version ${row.currentVersion})`;
  return {
    taskId: row.taskId,
    kind: "stale_write",
    severity: ended ? "critical" : staleVersionSeverity,
    message: `${row.actor} wrote to task ${row.taskId} expecting version ${row.expectedVersion}${seen ? ` (${seen.toStatus})` : ""}, but ${why}. The write was refused; the writer acted on a view that was no longer true.`,
    internal: { ...internal, status_seen: seen?.toStatus ?? null },
    external: {
      kind: "version",
      current_version: row.currentVersion,
      current_status: row.currentStatus,
      task_ended: ended,
    },
    fingerprint: `stale_write:version:${row.taskId}:${row.actor}`,
  };
}
