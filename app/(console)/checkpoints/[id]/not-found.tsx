import Link from "next/link";
import { EmptyState } from "@/components/empty-state";

export default function CheckpointNotFound() {
  return (
    <EmptyState level={1} title="No such checkpoint">
      <p>
        There is no checkpoint with that id. It may have been mistyped, or the link came from another Verity
        installation (a standby imports only checkpoints it can verify).
      </p>
      <p>
        <Link href="/tasks" className="button">
          Back to the task list
        </Link>
      </p>
    </EmptyState>
  );
}
