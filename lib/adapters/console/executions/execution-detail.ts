import type { Db } from "@/lib/db/client";
import { getExecution, listExecutionEvents, type ExecutionView } from "@/lib/stores/execution-store";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { getTask } from "@/lib/use-cases/tasks/task-queries";
import { listDivergences } from "@/lib/use-cases/alerts/divergence";
import { getReview } from "@/lib/use-cases/reviews/get-review";
import type { AlertStatus, ReviewDecisionKind, ReviewStatus } from "@/lib/generated/prisma/enums";
import type { ExecutionEventView } from "@/lib/adapters/console/reviews/reviews-view";
import { toEventView } from "@/lib/adapters/console/reviews/reviews-ledger";
import { reviewsOfTask } from "@/lib/adapters/console/reviews/reviews";
import type { Principal } from "@/lib/model/permissions";
import { maskExecutionEventsForReader, maskExecutionForReader } from "@/lib/use-cases/data-classes/mask-for-reader";

/**
 * One external call on its own page (/executions/[id]): what was asked
 * (request), what came back (result, evidence), every status it passed
 * through, the review that held it if any, the alerts raised over it, and
 * the task it belongs to. Where a person lands from an execution id.
 */
export interface ExecutionDetailData {
  execution: ExecutionView;
  /** Oldest first. */
  events: ExecutionEventView[];
  review: {
    id: string;
    status: ReviewStatus;
    round: number;
    /** Oldest first. */
    decisions: Array<{ kind: ReviewDecisionKind; actor: string; createdAt: Date }>;
  } | null;
  alerts: Array<{ id: string; kind: string; severity: string; status: AlertStatus; message: string; createdAt: Date }>;
  /** Null only if the task is gone while the execution is not (retention removes both in one transaction). */
  task: TaskView | null;
  /** The pointers shown as "[restricted]" because the reader has no clearance (`/request/customer_id`, `/events/2/evidence/…`). */
  maskedFields: string[];
}

/** Restricted request, result and evidence fields are masked for a `reader` without clearance, on the server. */
export async function loadExecutionDetail(
  db: Db,
  executionId: string,
  reader: Principal,
): Promise<ExecutionDetailData | null> {
  const stored = await getExecution(db, executionId);
  if (!stored) return null;
  const masked = await maskExecutionForReader(db, reader, stored);
  const execution = masked.value;
  // The review of this call, found the way the task page's ledger finds its calls' reviews.
  const [events, reviews, task, alerts] = await Promise.all([
    listExecutionEvents(db, execution.id),
    reviewsOfTask(db, execution.taskId),
    getTask(db, execution.taskId, "readable"),
    listDivergences(db, { taskId: execution.taskId }),
  ]);
  const maskedEvents = await maskExecutionEventsForReader(db, reader, stored, events);
  const reviewId = reviews.get(execution.id)?.id;
  const review = reviewId ? await getReview(db, reviewId) : null;
  return {
    execution,
    events: maskedEvents.map((e) => toEventView(e.value)),
    review: review
      ? {
          id: review.id,
          status: review.status,
          round: review.round,
          decisions: review.decisions.map((d) => ({ kind: d.kind, actor: d.actor, createdAt: d.createdAt })),
        }
      : null,
    alerts: alerts
      .filter((a) => a.executionId === execution.id)
      .map((a) => ({
        id: a.id,
        kind: a.kind,
        severity: a.severity,
        status: a.status,
        message: a.message,
        createdAt: a.createdAt,
      })),
    task,
    maskedFields: [
      ...masked.maskedFields,
      ...maskedEvents.flatMap((e, i) => e.maskedFields.map((p) => `/events/${i}${p}`)),
    ],
  };
}
