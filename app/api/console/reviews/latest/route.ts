import { getDb } from "@/lib/db";
import { reviewQueueToken } from "@/lib/console/reviews";
import { parseReviewTab } from "@/lib/console/reviews-query";
import { requireConsoleSession } from "@/lib/console/json-route";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

/** The queue's change token for one tab, and the open count the navigation badge shows. */
export const GET = withProblems(async (request) => {
  await requireConsoleSession("tasks:read");
  const tab = parseReviewTab(new URL(request.url).searchParams.get("status") ?? undefined);
  return json(await reviewQueueToken(getDb(), tab));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
