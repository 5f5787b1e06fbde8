import Link from "next/link";
import type { TaskListData } from "@/lib/adapters/console/tasks/task-list";
import { hasFilters, type TaskListParams } from "@/lib/adapters/console/tasks/task-list-query";
import { EmptyState } from "@/components/empty-state";
import { LiveRefresh } from "@/components/live-refresh";
import { Pagination } from "@/components/tasks/pagination";
import { StatusSummary } from "@/components/tasks/status-summary";
import { TaskFilters } from "@/components/tasks/task-filters";
import { TaskTable } from "@/components/tasks/task-table";
import { ExportLinks } from "@/components/export-links";
import { formatInteger, listTotal } from "@/lib/adapters/console/shared/format";

export function TaskListView({ params, list }: { params: TaskListParams; list: TaskListData }) {
  return (
    <>
      <header className="page-header">
        <div className="page-header__row">
          <h1>Tasks</h1>
          <div className="page-header__aside">
            <LiveRefresh
              url="/api/console/tasks/latest"
              token={list.newestToken}
              topic={{ kinds: ["task"] }}
              what="tasks"
            />
            <ExportLinks
              list="tasks"
              filters={{ status: params.status, workflow: params.workflow, q: params.q, actor: params.actor }}
              what="tasks"
            />
          </div>
        </div>
        <p className="lede">
          Every task Verity holds, {params.order === "asc" ? "oldest" : "newest"}{" "}
          {params.sort === "created" ? "first by creation" : "change first"}. Counts are per workflow; select one to
          filter.
        </p>
      </header>
      <StatusSummary counts={list.counts} params={params} />
      <TaskFilters params={params} groups={list.workflows} />
      {!list.ok ? (
        <EmptyState title="This page link no longer works" tone="error">
          <p>{list.message}</p>
          <p>
            <Link href="/tasks" className="button">
              Go to the first page
            </Link>
          </p>
        </EmptyState>
      ) : list.page.items.length === 0 ? (
        hasFilters(params) ? (
          <EmptyState title="No tasks match these filters">
            <p>
              {list.total.among === null
                ? "Nothing has this combination of workflow, status, id and actor."
                : `None of the ${formatInteger(list.total.among)} tasks changed most recently has this combination of workflow, status, id and actor; older ones are found by their id in the search box.`}{" "}
              Loosen a filter, or clear them all.
            </p>
            <p>
              <Link href="/tasks" className="button">
                Clear filters
              </Link>
            </p>
          </EmptyState>
        ) : params.cursor ? (
          <EmptyState title="No more tasks">
            <p>
              You reached the end of the list. <Link href="/tasks">Back to the first page</Link>.
            </p>
          </EmptyState>
        ) : (
          <EmptyState title="No tasks yet">
            <p>
              Agents create tasks through the API: <code>POST /api/v1/tasks</code> with their bearer token. They appear
              here as soon as they exist.
            </p>
          </EmptyState>
        )
      ) : (
        <>
          <p className="list-total" role="status" data-testid="task-total">
            {listTotal(list.total.count, "task", hasFilters(params), list.total.among)}
          </p>
          <TaskTable tasks={list.page.items} params={params} />
          <Pagination params={params} shown={list.page.items.length} nextCursor={list.page.nextCursor} />
        </>
      )}
    </>
  );
}
