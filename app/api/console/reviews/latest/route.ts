import { getDb } from "@/lib/db";
import { reviewQueueToken } from "@/lib/console/reviews";
import { parseReviewTab } from "@/lib/console/reviews-query";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";

/** The queue's change token for one tab, and the open count the navigation badge shows. */
export async function GET(request: Request): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("tasks:read");
  if (principal instanceof Response) return principal;
  const tab = parseReviewTab(new URL(request.url).searchParams.get("status") ?? undefined);
  return Response.json(await reviewQueueToken(getDb(), tab), { headers: noStore });
}
