import { dbFor } from "@/lib/db/client";
import { loadReviewDetail, reviewDetailToken } from "@/lib/adapters/console/reviews/reviews";
import { notFound, requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** A token that moves with the review, its execution and its task: the review page polls it and refreshes when it changes. */
export const GET = withProblems(async (_request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireConsoleSession("tasks:read");
  const { id } = await params;
  const data = await loadReviewDetail(dbFor(principal), id, principal);
  if (!data) throw notFound("Review", id);
  return json({ token: reviewDetailToken(data.review) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
