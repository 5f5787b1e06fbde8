import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { guardOf, listExecutionEvents, type ExecutionView } from "@/lib/stores/execution-store";
import { getCurrentInstruction, getInstructionsByIds } from "@/lib/stores/instructions";
import { toolDefinitionOf } from "@/lib/stores/tool-registry";
import { findReview } from "@/lib/stores/review-store";
import { isNeverSent, toReviewListItems, type ReviewDetail } from "@/lib/use-cases/reviews/review-views";

export async function getReview(db: Db, reviewId: string): Promise<ReviewDetail | null> {
  const row = await findReview(db, { id: reviewId });
  if (!row) return null;
  const [item] = await toReviewListItems(db, [row]);
  if (!item) return null;
  const [events, instructions] = await Promise.all([
    listExecutionEvents(db, row.executionId),
    instructionsOf(db, item.execution),
  ]);
  return { ...item, events, neverSent: isNeverSent(item.execution), instructions };
}

/** The instructions behind a review's action (see ReviewDetail.instructions). */
export async function instructionsOf(db: Db, execution: ExecutionView): Promise<ReviewDetail["instructions"]> {
  const guard = await guardOf(db, execution.id);
  if (guard) return { ...guard, frozenByGuard: true };
  const row = await db.execution.findUnique({ where: { id: execution.id }, select: { toolVersion: true } });
  const tool = await toolDefinitionOf(db, execution.tool, row?.toolVersion ?? null);
  if (!tool) return null;
  const topic = tool.topic;
  const [reliedOn] = execution.instructionId ? await getInstructionsByIds(db, [execution.instructionId]) : [];
  const current = await getCurrentInstruction(db, execution.taskId, topic);
  if (!reliedOn && !current) return null;
  return { kind: "superseded", topic, reliedOn: reliedOn ?? null, current, frozenByGuard: false };
}

export async function getReviewOrThrow(db: Db, reviewId: string): Promise<ReviewDetail> {
  const review = await getReview(db, reviewId);
  if (!review) throw new AppError("not_found", `Review ${reviewId} does not exist.`);
  return review;
}
