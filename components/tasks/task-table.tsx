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
  return (
    <div className="table-wrap">
      <table className="table task-table">
        <caption className="visually-hidden">Tasks, {asc ? "least" : "most"} recently updated first</caption>
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
            <th scope="col" className="col-p2" aria-sort={asc ? "ascending" : "descending"}>
              {/* The one order a keyset page can take both ways: by last change. */}
              <Link
                className="sort-link"
                href={taskListHref({ ...params, order: asc ? "desc" : "asc", cursor: undefined })}
                title={asc ? "Sort newest change first" : "Sort oldest change first"}
              >
                Updated <span aria-hidden="true">{asc ? "↑" : "↓"}</span>
                <span className="visually-hidden">, {asc ? "oldest" : "newest"} first: change the order</span>
              </Link>
            </th>
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
