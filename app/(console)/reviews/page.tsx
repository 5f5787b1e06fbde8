import type { Metadata } from "next";
import { authorizePage } from "@/lib/adapters/auth/session";
import { getDb } from "@/lib/db/client";
import { loadReviewQueue } from "@/lib/adapters/console/reviews/reviews";
import { parseReviewTab, reviewListHref } from "@/lib/adapters/console/reviews/reviews-query";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { ReviewQueueView } from "@/components/reviews/review-queue-view";

export const metadata: Metadata = { title: "Review queue" };

export default async function ReviewsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const tab = parseReviewTab((await searchParams).status);
  const access = await authorizePage("tasks:read", reviewListHref(tab));
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  return <ReviewQueueView data={await loadReviewQueue(getDb(), tab)} principal={access.principal} />;
}
