import Link from "next/link";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { RelativeTime } from "@/components/relative-time";
import { Identity } from "@/components/identity";
import { StatusBadge } from "@/components/status-badge";
import { TruncatedText } from "@/components/truncated-text";
import { CopyButton } from "@/components/copy-button";

export function TaskTable({ tasks }: { tasks: TaskView[] }) {
  return (
    <div className="table-wrap">
      <table className="table task-table">
        <caption className="visually-hidden">Tasks, most recently updated first</caption>
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
            <th scope="col" className="col-p2">
              Updated
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
                {task.workflow.name} <span className="subtle">v{task.workflow.version}</span>
              </td>
              <td>
                <StatusBadge status={task.status} def={getWorkflowByDigest(task.workflow.digest)} />
              </td>
              <td className="num mono col-p3">{task.version}</td>
              <td className="col-p2">
                <RelativeTime value={task.updatedAt} />
              </td>
              <td className="col-p3">
                <Identity value={task.updatedBy} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
