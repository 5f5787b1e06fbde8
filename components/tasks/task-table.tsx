import Link from "next/link";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { RelativeTime } from "@/components/relative-time";
import { Identity } from "@/components/identity";
import { StatusBadge } from "@/components/status-badge";
import { TruncatedText } from "@/components/truncated-text";
import { CopyButton } from "@/components/copy-button";
import { taskListHref, type TaskListParams } from "@/lib/adapters/console/tasks/task-list-query";

export function TaskTable({ tasks, params }: { tasks: TaskView[]; params: TaskListParams }) {
  const asc = params.order === "asc";
  const byCreation = params.sort === "created";
  return (
    <div className="table-wrap">
      <table className="table task-table">
        <caption className="visually-hidden">
          Tasks, {asc ? "least" : "most"} recently {byCreation ? "created" : "updated"} first
        </caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col" className="col-p2">
              Workflow
            </th>
            <th scope="col">Status</th>
            <th scope="col" className="num col-p3">
              Version
            </th>
            <SortableHeader params={params} sort="updated" label="Updated" what="change" className="col-p2" />
            <SortableHeader params={params} sort="created" label="Created" what="task" className="col-p3" />
            <th scope="col" className="col-p3">
              Updated by
            </th>
          </tr>
        </thead>
        <tbody>
          {tasks.map((task) => (
            <tr key={task.id}>
              <th scope="row">
                <span className="with-copy">
                  <Link href={`/tasks/${encodeURIComponent(task.id)}`} className="task-link">
                    <TruncatedText value={task.id} className="mono" />
                  </Link>
                  <CopyButton value={task.id} what="task id" />
                </span>
                <TruncatedText value={task.intentId} className="subtle" />
              </th>
              <td className="col-p2">
                <Link
                  href={taskListHref({ ...params, workflow: task.workflow.name, status: undefined, cursor: undefined })}
                  title={`Only ${task.workflow.name} tasks`}
                >
                  {task.workflow.name}
                </Link>{" "}
                <span className="subtle">v{task.workflow.version}</span>
              </td>
              <td>
                <StatusBadge status={task.status} def={getWorkflowByDigest(task.workflow.digest)} />
              </td>
              <td className="num mono col-p3">{task.version}</td>
              <td className="col-p2">
                <RelativeTime value={task.updatedAt} />
              </td>
              <td className="col-p3">
                <RelativeTime value={task.createdAt} />
              </td>
              <td className="col-p3">
                <Link
                  href={taskListHref({ ...params, actor: task.updatedBy, cursor: undefined })}
                  title={`Only tasks last changed by ${task.updatedBy}`}
                >
                  <Identity value={task.updatedBy} />
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A column the list can be ordered by (a keyset page takes either order both
 * ways): the current one toggles its direction, another starts newest first.
 */
function SortableHeader({
  params,
  sort,
  label,
  what,
  className,
}: {
  params: TaskListParams;
  sort: "updated" | "created";
  label: string;
  /** "change": "newest change first". */
  what: string;
  className: string;
}) {
  const current = (params.sort ?? "updated") === sort;
  const asc = current && params.order === "asc";
  const next = current && !asc ? "asc" : "desc";
  return (
    <th scope="col" className={className} aria-sort={current ? (asc ? "ascending" : "descending") : undefined}>
      <Link
        className="sort-link"
        href={taskListHref({ ...params, sort, order: next, cursor: undefined })}
        title={`Sort ${next === "asc" ? "oldest" : "newest"} ${what} first`}
      >
        {label} {current ? <span aria-hidden="true">{asc ? "↑" : "↓"}</span> : null}
        <span className="visually-hidden">
          {current ? `, ${asc ? "oldest" : "newest"} first` : ", not sorted"}: sort{" "}
          {next === "asc" ? "oldest" : "newest"} {what} first
        </span>
      </Link>
    </th>
  );
}
