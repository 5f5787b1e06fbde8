import Link from "next/link";
import { taskListHref, type TaskListParams } from "@/lib/adapters/console/tasks/task-list-query";
import { pluralize } from "@/lib/adapters/console/shared/format";

/** Keyset paging: a cursor only goes forward, so the way back is to the first page. */
export function Pagination({
  params,
  shown,
  nextCursor,
}: {
  params: TaskListParams;
  shown: number;
  nextCursor: string | null;
}) {
  const onFirstPage = !params.cursor;
  return (
    <nav className="pagination" aria-label="Pages">
      <p className="pagination__info">
        {pluralize(shown, "task")} on this page{onFirstPage ? "" : " (not the first)"}
      </p>
      <ul>
        <li>
          {onFirstPage ? (
            <span className="button button--ghost" aria-disabled="true">
              ← First page
            </span>
          ) : (
            <Link className="button" href={taskListHref({ ...params, cursor: undefined })}>
              ← First page
            </Link>
          )}
        </li>
        <li>
          {nextCursor ? (
            <Link className="button" href={taskListHref({ ...params, cursor: nextCursor })} rel="next">
              Next page →
            </Link>
          ) : (
            <span className="button button--ghost" aria-disabled="true">
              No more tasks
            </span>
          )}
        </li>
      </ul>
    </nav>
  );
}
