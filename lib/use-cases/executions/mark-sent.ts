import { inSpan } from "@/lib/config/tracing";
import { z } from "zod";
import { transactionOn, type Db, type Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Execution } from "@/lib/generated/prisma/client";
import {
  getExecutionRowOrThrow,
  illegalMove,
  moveExecution,
  releasedByReviewAt,
  staleAttempt,
  toExecutionView,
  type ExecutionView,
} from "@/lib/stores/execution-store";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { toolOfExecutionOrThrow } from "@/lib/use-cases/tools/tool-of-execution";
import { checkInstructionGuard, type InstructionBlock } from "@/lib/stores/instructions";
import { moveTaskAfterSettlement } from "@/lib/use-cases/executions/settle-task";
import { fencingTokenSchema } from "@/lib/use-cases/executions/input-fields";
import { freezeBeforeSending } from "@/lib/use-cases/executions/freeze-before-sending";
import { refuseUnlessLeaseCurrent } from "@/lib/use-cases/executions/lease-fencing";

export const MarkSentInputSchema = z.strictObject({
  attempt_id: clientIdSchema,
  /** The sender's lease; without it, the lease the attempt was recorded under is assumed. */
  fencing_token: fencingTokenSchema.optional(),
});

/**
 * People who released this attempt from a review approved sending it over
 * the instructions as they stood: the same block does not freeze it again.
 * An instruction recorded after their approval is news they did not weigh,
 * and still stops it.
 */
async function approvedOverBlock(tx: Tx, existing: Execution, block: InstructionBlock): Promise<boolean> {
  const releasedAt = await releasedByReviewAt(tx, existing);
  if (!releasedAt) return false;
  const newest = [block.current, block.reliedOn].filter((i) => i !== null).map((i) => i.createdAt.getTime());
  return newest.every((t) => t <= releasedAt.getTime());
}

/**
 * The move to SENT, with the sender's lease: the caller has checked that the
 * lease may send and that no instruction stops it, in the same transaction
 * (markSent, or recordIntent with `send`).
 */
export function sendInTransaction(tx: Tx, row: Execution, token: string | undefined, actor: Actor): Promise<Execution> {
  const leaseToken = token === undefined ? null : BigInt(token);
  return moveExecution(tx, row, "SENT", actor, { reason: sendingReason, data: { sentAt: new Date(), leaseToken } });
}

/** The words of the move to SENT, wherever it is made (here, or an intent inserted SENT: insertIntent's `sent`). */
export const sendingReason = "request leaving";

/** markSent as a span of the request's trace (lib/config/tracing.ts). */
export function markSent(db: Db, executionId: string, raw: unknown, actor: Actor): Promise<ExecutionView> {
  return inSpan("use-case markSent", { "verity.execution_id": executionId }, () =>
    markSentUntraced(db, executionId, raw, actor),
  );
}

async function markSentUntraced(db: Db, executionId: string, raw: unknown, actor: Actor): Promise<ExecutionView> {
  const input = parseOrThrow(MarkSentInputSchema, raw);
  const existing = await getExecutionRowOrThrow(db, executionId);
  if (existing.attemptId !== input.attempt_id) throw staleAttempt(existing, input.attempt_id);
  const token = input.fencing_token ?? (existing.leaseToken === null ? undefined : String(existing.leaseToken));
  if (existing.status === "SENT") {
    // A retry of our own markSent is answered; another lease's is refused, or two processes would both send.
    if (actor.kind === "agent" && existing.leaseToken !== null && token !== String(existing.leaseToken)) {
      throw new AppError(
        "lease_conflict",
        `Attempt ${existing.attemptId} was already sent under fencing token ${existing.leaseToken}, not yours (${token ?? "none"}): do not send it. Its outcome is reconciled with the provider.`,
        {
          violations: [
            { invariant: "fencing_token_current", message: `sent under fencing token ${existing.leaseToken}` },
          ],
        },
      );
    }
    return toExecutionView(existing);
  }
  if (existing.status !== "INTENT_RECORDED") throw illegalMove(existing, "SENT");
  // The last moment before the request leaves: an instruction recorded since
  // the intent (a resumed worker, a slow one) still stops it here.
  type Sending =
    | { blocked: Awaited<ReturnType<typeof freezeBeforeSending>>; row?: undefined }
    | { row: Execution; blocked?: undefined };
  const sent = await transactionOn(db, async (tx): Promise<Sending> => {
    // Only the task's current lease may send an attempt: a worker fenced
    // since the intent (its lease expired and was taken over, or another
    // process of its identity holds it) stops here, before anything leaves.
    // FOR SHARE holds off a takeover until this commits; after that the new
    // holder finds the attempt SENT and reconciles it instead of sending.
    if (actor.kind === "agent")
      await refuseUnlessLeaseCurrent(tx, existing.taskId, token, actor, `Attempt ${existing.attemptId} was not sent`);
    if (existing.irreversible) {
      const tool = await toolOfExecutionOrThrow(tx, existing);
      const block = await checkInstructionGuard(tx, existing.taskId, tool, existing.instructionId);
      if (block && !(await approvedOverBlock(tx, existing, block))) {
        const frozen = await freezeBeforeSending(tx, existing, block, actor);
        await moveTaskAfterSettlement(
          tx,
          await getExecutionRowOrThrow(tx, existing.id),
          "WAITING_FOR_HUMAN",
          actor,
          block.message,
        );
        return { blocked: frozen };
      }
    }
    return { row: await sendInTransaction(tx, existing, token, actor) };
  });
  if (sent.blocked) {
    // Committed (frozen, reviewed); the request must not leave, so the answer is an error the SDK reads as `blocked`.
    throw new AppError("invariant_violated", sent.blocked.message, {
      violations: [{ invariant: "instruction_current_before_send", message: sent.blocked.message }],
      executionId: existing.id,
      reviewId: sent.blocked.reviewId,
    });
  }
  return toExecutionView(sent.row!);
}
