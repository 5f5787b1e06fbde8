import type { Metadata } from "next";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
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
  return (
    <ReviewQueueView
      data={await loadReviewQueue(await consoleDb(), tab, access.principal)}
      principal={access.principal}
    />
  );
}
