import Link from "next/link";
import { EmptyState } from "@/components/empty-state";

export default function TaskNotFound() {
  return (
    <EmptyState level={1} title="No such task">
      <p>
        There is no task with that id. It may have been mistyped, or the link came from another Verity installation.
      </p>
      <p>
        <Link href="/tasks" className="button">
          Back to the task list
        </Link>
      </p>
    </EmptyState>
  );
}
