import Link from "next/link";
import { EmptyState } from "@/components/empty-state";

/** What a signed-in person sees on a page their role may not open: the reason, in words. */
export function ForbiddenNotice({ reason }: { reason: string }) {
  return (
    <EmptyState title="You cannot open this page" tone="error" level={1}>
      <p>{reason}</p>
      <p>
        Ask an administrator for a role that includes it, or go back to <Link href="/tasks">the task list</Link>.
      </p>
    </EmptyState>
  );
}
