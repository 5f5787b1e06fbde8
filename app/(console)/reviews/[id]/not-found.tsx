import Link from "next/link";
import { EmptyState } from "@/components/empty-state";

export default function ReviewNotFound() {
  return (
    <EmptyState level={1} title="No such review">
      <p>
        There is no review with that id. It may have been mistyped, or the link came from another Verity installation.
      </p>
      <p className="button-row">
        <Link href="/reviews" className="button button--primary">
          Go to the review queue
        </Link>
      </p>
    </EmptyState>
  );
}
