import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { askProvider, loadReviewDetail, reviewDetailToken } from "@/lib/adapters/console/reviews/reviews";
import { isNeverSent } from "@/lib/use-cases/reviews/review-views";
import { instructionsOf } from "@/lib/use-cases/reviews/get-review";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { ReviewDetailView } from "@/components/reviews/review-detail-view";

type Props = { params: Promise<{ id: string }> };

function reviewIdFrom(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Review ${reviewIdFrom((await params).id)}` };
}

export default async function ReviewPage({ params }: Props) {
  const id = reviewIdFrom((await params).id);
  const access = await authorizePage("tasks:read", `/reviews/${encodeURIComponent(id)}`);
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const db = await consoleDb();
  const data = await loadReviewDetail(db, id, access.principal);
  if (!data) notFound();
  // Started now, awaited inside a Suspense boundary: a slow provider delays one card, not the page.
  const lookup = askProvider(db, data.review, access.principal);
  const instructions = await instructionsOf(db, data.review.execution);
  return (
    <ReviewDetailView
      data={data}
      principal={access.principal}
      lookup={lookup}
      token={reviewDetailToken(data.review)}
      instructions={instructions ? { ...instructions, neverSent: isNeverSent(data.review.execution) } : null}
    />
  );
}
