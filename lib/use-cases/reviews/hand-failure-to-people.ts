import type { Tx } from "@/lib/db/client";
import type { Execution } from "@/lib/generated/prisma/client";
import { ledgerActor, moveExecution } from "@/lib/stores/execution-store";
import { retryAdviceOf } from "@/lib/model/executions/execution-rules";
import { openReview } from "@/lib/stores/review-store";
import { moveTaskAfterSettlement } from "@/lib/use-cases/executions/settle-task";
import { type TaskView } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";

/**
 * Hands a failure past its attempt limit to people, in the caller's
 * transaction: the execution NEEDS_HUMAN (after the event that recorded the
 * failure, so the history has both), its review opened or reopened, the
 * task to WAITING_FOR_HUMAN. A reviewer approves one more attempt under the
 * same key (decide-review.ts approve_execute) or rejects it.
 */
export async function handFailureToPeople(
  tx: Tx,
  row: Execution,
  actor: Actor = ledgerActor,
): Promise<{ execution: Execution; task: TaskView | null; reviewId: string }> {
  const advice = retryAdviceOf(row);
  const why =
    `${row.tool} (${row.toolCallId}): ${advice?.reason ?? `recorded ${row.status}`}. Approve sending it again under the same idempotency key, or reject it.`.slice(
      0,
      2000,
    );
  const frozen = await moveExecution(tx, row, "NEEDS_HUMAN", actor, {
    reason: why,
    evidence: { retry: advice, failure: { status: row.status, error: row.error, result: row.result } },
  });
  const review = await openReview(tx, frozen, why, actor);
  const task = await moveTaskAfterSettlement(tx, frozen, "WAITING_FOR_HUMAN", actor, why);
  return { execution: frozen, task, reviewId: review.id };
}
