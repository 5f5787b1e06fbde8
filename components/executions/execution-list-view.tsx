import Link from "next/link";
import { plainOptions, SelectFilter } from "@/components/select-filter";
import { executionStatusInfo } from "@/lib/adapters/console/reviews/reviews-format";
import type { ExecutionListData, ExecutionListItem } from "@/lib/adapters/console/executions/executions";
import {
  executionListHref,
  executionStatuses,
  type ExecutionListParams,
} from "@/lib/adapters/console/executions/executions-query";
import { formatDuration } from "@/lib/core/format-duration";
import { formatDateTime, listTotal, pluralize } from "@/lib/adapters/console/shared/format";
import { RelativeTime } from "@/components/relative-time";
import { EmptyState } from "@/components/empty-state";
import { ExecutionStatusBadge } from "@/components/task/execution-status-badge";
import { TruncatedText } from "@/components/truncated-text";
import "@/components/dashboard/dashboard.css";
import { CopyButton } from "@/components/copy-button";
import { ExportLinks } from "@/components/export-links";

/** Every external call across tasks: where the dashboard's "unknown outcomes" lead. */
export function ExecutionListView({
  params,
  list,
  now,
  tools,
}: {
  params: ExecutionListParams;
  list: ExecutionListData;
  now: Date;
  /** Every tool a call can be of: the built-ins and the registered ones. */
  tools: readonly string[];
}) {
  const filtered = Boolean(params.status || params.tool);
  return (
    <>
      <header className="page-header">
        <div className="page-header__row">
          <h1>Executions</h1>
          <div className="page-header__aside">
            <ExportLinks list="executions" filters={{ status: params.status, tool: params.tool }} what="executions" />
          </div>
        </div>
        <p className="lede">
          Every external call agents made, most recently changed first.{" "}
          {params.status ? (
            <>
              Showing <strong>{params.status}</strong>: {executionStatusInfo[params.status].meaning}
            </>
          ) : (
            "Filter by status or tool; each row links to its task."
          )}
        </p>
      </header>
      <form method="get" action="/executions" className="filters" role="search" aria-label="Filter executions">
        <SelectFilter
          id="filter-exec-status"
          name="status"
          label="Status"
          anyLabel="All statuses"
          options={executionStatuses.map((s) => ({ value: s, label: `${s} — ${executionStatusInfo[s].label}` }))}
          value={params.status}
        />
        <SelectFilter
          id="filter-exec-tool"
          name="tool"
          label="Tool"
          anyLabel="All tools"
          options={plainOptions(tools)}
          value={params.tool}
        />
        <div className="filters__actions">
          <button type="submit" className="button button--primary">
            Apply
          </button>
          {filtered ? (
            <Link href="/executions" className="button button--ghost">
              Clear
            </Link>
          ) : null}
        </div>
      </form>
      {!list.ok ? (
        <EmptyState title="This page link no longer works" tone="error">
          <p>{list.message}</p>
          <p>
            <Link href={executionListHref({ ...params, cursor: undefined })} className="button">
              Go to the first page
            </Link>
          </p>
        </EmptyState>
      ) : list.page.items.length === 0 ? (
        params.cursor ? (
          <EmptyState title="No more executions">
            <p>
              You reached the end of the list.{" "}
              <Link href={executionListHref({ ...params, cursor: undefined })}>Back to the first page</Link>.
            </p>
          </EmptyState>
        ) : filtered ? (
          <EmptyState title="No executions match these filters">
            <p>
              {params.status === "OUTCOME_UNKNOWN"
                ? "No external call has an unknown outcome right now: the reconciler has settled every one, or sent it to the review queue."
                : "Nothing has this combination of status and tool."}
            </p>
            <p>
              <Link href="/executions" className="button">
                Clear filters
              </Link>
            </p>
          </EmptyState>
        ) : (
          <EmptyState title="No executions yet">
            <p>
              An execution is recorded before every external call an agent makes (a refund, a CRM note). They appear
              here as soon as they exist.
            </p>
          </EmptyState>
        )
      ) : (
        <>
          <p className="list-total" role="status" data-testid="execution-total">
            {listTotal(list.total, "execution", filtered)}
          </p>
          <ExecutionTable items={list.page.items} now={now} />
          <nav className="pagination" aria-label="Pages">
            <p className="pagination__info">
              {pluralize(list.page.items.length, "execution")} on this page{params.cursor ? " (not the first)" : ""}
            </p>
            <ul>
              <li>
                {params.cursor ? (
                  <Link className="button" href={executionListHref({ ...params, cursor: undefined })}>
                    ← First page
                  </Link>
                ) : (
                  <span className="button button--ghost" aria-disabled="true">
                    ← First page
                  </span>
                )}
              </li>
              <li>
                {list.page.nextCursor ? (
                  <Link
                    className="button"
                    href={executionListHref({ ...params, cursor: list.page.nextCursor })}
                    rel="next"
                  >
                    Next page →
                  </Link>
                ) : (
                  <span className="button button--ghost" aria-disabled="true">
                    No more executions
                  </span>
                )}
              </li>
            </ul>
          </nav>
        </>
      )}
    </>
  );
}

function ExecutionTable({ items, now }: { items: ExecutionListItem[]; now: Date }) {
  return (
    <div className="table-wrap">
      <table className="table exec-table">
        <caption className="visually-hidden">Executions</caption>
        <thead>
          <tr>
            <th scope="col" className="col-p2">
              Execution
            </th>
            <th scope="col">Status</th>
            <th scope="col" className="col-p2">
              In this status for
            </th>
            <th scope="col" className="col-p2">
              Tool
            </th>
            <th scope="col">Task</th>
            <th scope="col" className="col-p3">
              Idempotency key
            </th>
            <th scope="col" className="num col-p3">
              Attempt
            </th>
            <th scope="col" className="col-p3">
              Created
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((e) => (
            <tr key={e.id}>
              <th scope="row" className="col-p2">
                <Link href={`/executions/${encodeURIComponent(e.id)}`} className="task-link">
                  <TruncatedText value={e.id} className="mono" />
                </Link>
              </th>
              <td>
                <ExecutionStatusBadge status={e.status} />
              </td>
              <td className="exec-age col-p2">
                <time dateTime={e.updatedAt.toISOString()} title={`since ${formatDateTime(e.updatedAt)}`}>
                  {formatDuration(now.getTime() - e.updatedAt.getTime())}
                </time>
              </td>
              <td className="mono col-p2">{e.tool}</td>
              <td>
                <Link href={`/tasks/${encodeURIComponent(e.taskId)}`} className="task-link">
                  <TruncatedText value={e.taskId} className="mono" />
                </Link>
              </td>
              <td className="col-p3">
                <span className="with-copy">
                  <TruncatedText value={e.idempotencyKey} className="mono" />
                  <CopyButton value={e.idempotencyKey} what="idempotency key" />
                </span>
              </td>
              <td className="num col-p3">{e.attempt}</td>
              <td className="exec-created col-p3">
                <RelativeTime value={e.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
