import { getDb } from "@/lib/db";
import { loadReviewDetail, reviewDetailToken } from "@/lib/console/reviews";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";

/** A token that moves with the review, its execution and its task: the review page polls it and refreshes when it changes. */
export async function GET(_request: Request, context: { params: Promise<{ id: string }> }): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("tasks:read");
  if (principal instanceof Response) return principal;
  const { id } = await context.params;
  const data = await loadReviewDetail(getDb(), id);
  if (!data) return Response.json({ error: `Review ${id} does not exist.` }, { status: 404, headers: noStore });
  return Response.json({ token: reviewDetailToken(data.review) }, { headers: noStore });
}
