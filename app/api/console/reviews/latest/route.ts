import { dbFor } from "@/lib/db/client";
import { reviewQueueToken } from "@/lib/adapters/console/reviews/reviews";
import { parseReviewTab } from "@/lib/adapters/console/reviews/reviews-query";
import { requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** The queue's change token for one tab, and the open count the navigation badge shows. */
export const GET = withProblems(async (request) => {
  const principal = await requireConsoleSession("tasks:read");
  const tab = parseReviewTab(new URL(request.url).searchParams.get("status") ?? undefined);
  return json(await reviewQueueToken(dbFor(principal), tab));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
