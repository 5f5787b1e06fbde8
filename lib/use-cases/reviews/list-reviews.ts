import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { parseOrThrow } from "@/lib/core/validation";
import { findReviews, reviewStatuses, undecidedStatuses } from "@/lib/stores/review-store";
import { toReviewListItems, type ReviewListItem } from "@/lib/use-cases/reviews/review-views";

export const ListReviewsQuerySchema = z.strictObject({
  status: z.enum(reviewStatuses).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export type ListReviewsQuery = z.input<typeof ListReviewsQuerySchema>;

export async function listReviews(db: Db, rawQuery: ListReviewsQuery = {}): Promise<ReviewListItem[]> {
  const query = parseOrThrow(ListReviewsQuerySchema, rawQuery);
  const waitingQueue = query.status === undefined || undecidedStatuses.includes(query.status);
  const rows = await findReviews(db, {
    where: query.status ? { status: query.status } : {},
    // The queue is worked oldest first; decided reviews are history, newest first.
    orderBy: [{ createdAt: waitingQueue ? "asc" : "desc" }, { id: "asc" }],
    take: query.limit,
  });
  return toReviewListItems(db, rows);
}
