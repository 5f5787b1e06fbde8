import type { Db } from "@/lib/db/client";
import type { Execution, ExecutionEvent } from "@/lib/generated/prisma/client";
import { readableExecutionViews, type ExecutionView, type InstructionGuardView } from "@/lib/stores/execution-store";
import { toReviewView, type ReviewView, type ReviewWithDecisions } from "@/lib/stores/review-store";

export interface ReviewListItem extends ReviewView {
  execution: ExecutionView;
  task: { id: string; status: string; version: number } | null;
  /** Since the review opened; until it was decided, once it is. */
  waitingMs: number;
  /** Open divergence alerts of the task (an effect_mismatch explains why the review exists). */
  openAlerts: Array<{ id: string; kind: string; severity: string; message: string; createdAt: Date }>;
}

export interface ReviewDetail extends ReviewListItem {
  events: ExecutionEvent[];
  /** The action was frozen before it was ever sent (by the instruction guard): approving sends it for the first time. */
  neverSent: boolean;
  /**
   * The instructions behind the action: the one it relied on and the one that
   * superseded it (or forbids it), as the guard saw them; for an action the
   * guard did not freeze, what it relied on and its topic's current one now.
   * Null when the task has no instruction on the topic.
   */
  instructions: (InstructionGuardView & { frozenByGuard: boolean }) | null;
}

/** The current attempt never left: its sent_at is only ever set by SENT. */
export function isNeverSent(execution: Pick<Execution, "sentAt">): boolean {
  return execution.sentAt === null;
}

/**
 * Review rows (opened: findReview, findReviews) as queue items: each with
 * its execution, its task and the task's open alerts, read in three queries
 * for all of them.
 */
export async function toReviewListItems(db: Db, rows: ReviewWithDecisions[]): Promise<ReviewListItem[]> {
  if (rows.length === 0) return [];
  const taskIds = [...new Set(rows.map((r) => r.taskId))];
  const [executions, tasks, alerts] = await Promise.all([
    db.execution
      .findMany({ where: { id: { in: rows.map((r) => r.executionId) } } })
      .then((found) => readableExecutionViews(db, found)),
    db.task.findMany({ where: { id: { in: taskIds } }, select: { id: true, status: true, version: true } }),
    db.divergenceAlert.findMany({ where: { taskId: { in: taskIds }, status: "OPEN" }, orderBy: { createdAt: "asc" } }),
  ]);
  const now = Date.now();
  return rows.flatMap((row) => {
    const execution = executions.find((e) => e.id === row.executionId);
    // The execution is never deleted; a review without one would be a broken row, not a queue item.
    if (!execution) return [];
    return [
      {
        ...toReviewView(row),
        execution,
        task: tasks.find((t) => t.id === row.taskId) ?? null,
        waitingMs: (row.decidedAt?.getTime() ?? now) - row.createdAt.getTime(),
        openAlerts: alerts
          .filter((a) => a.taskId === row.taskId)
          .map((a) => ({ id: a.id, kind: a.kind, severity: a.severity, message: a.message, createdAt: a.createdAt })),
      },
    ];
  });
}
