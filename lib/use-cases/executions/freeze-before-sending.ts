import type { Tx } from "@/lib/db/client";
import type { Execution } from "@/lib/generated/prisma/client";
import {
  moveExecution,
  toExecutionView,
  type ExecutionView,
  type InstructionGuardView,
} from "@/lib/stores/execution-store";
import type { InstructionBlock } from "@/lib/stores/instructions";
import { openReview } from "@/lib/stores/review-store";
import type { Actor } from "@/lib/model/actor";

/**
 * Freezes an intent that was never sent: NEEDS_HUMAN (its `error` says why)
 * and a review naming both instructions, in the caller's transaction. The
 * caller moves the task to WAITING_FOR_HUMAN through the task CAS, the way
 * the reconciler's frozen refunds get there.
 */
export async function freezeBeforeSending(
  tx: Tx,
  row: Execution,
  block: InstructionBlock,
  actor: Actor,
): Promise<{ execution: ExecutionView; reviewId: string; message: string; guard: InstructionGuardView }> {
  const guard: InstructionGuardView = {
    kind: block.kind,
    topic: block.topic,
    reliedOn: block.reliedOn,
    current: block.current,
  };
  const frozen = await moveExecution(tx, row, "NEEDS_HUMAN", actor, {
    reason: block.message.slice(0, 2000),
    evidence: {
      instruction_guard: {
        kind: block.kind,
        topic: block.topic,
        relied_on_id: block.reliedOn?.id ?? null,
        current_id: block.current?.id ?? null,
      },
    },
    data: { error: block.message.slice(0, 2000) },
  });
  const review = await openReview(tx, frozen, block.message, actor);
  return { execution: toExecutionView(frozen), reviewId: review.id, message: block.message, guard };
}
