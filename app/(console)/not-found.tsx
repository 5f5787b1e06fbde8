import Link from "next/link";
import { EmptyState } from "@/components/empty-state";

/**
 * A console page's notFound() (an alert, a task's history, a workflow's page) with no
 * not-found of its own: rendered inside the console's shell, whose layout already holds
 * the page's one <main>, so this is only its contents. The root not-found.tsx, with its
 * own <main>, serves addresses outside every page.
 */
export default function ConsoleNotFound() {
  return (
    <EmptyState level={1} title="Page not found">
      <p>There is nothing at this address.</p>
      <p>
        <Link href="/tasks" className="button">
          Go to the task list
        </Link>
      </p>
    </EmptyState>
  );
}
