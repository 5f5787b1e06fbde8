import Link from "next/link";
import { EmptyState } from "@/components/empty-state";

export default function ExecutionNotFound() {
  return (
    <EmptyState level={1} title="No such execution">
      <p>There is no execution with that id. It may have been mistyped, or its task was removed by retention.</p>
      <p>
        <Link href="/executions" className="button">
          Back to the executions
        </Link>
      </p>
    </EmptyState>
  );
}
