import Link from "next/link";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { DateTime } from "@/components/date-time";
import { Identity } from "@/components/identity";
import { StatusBadge } from "@/components/status-badge";

export function TaskTable({ tasks }: { tasks: TaskView[] }) {
  return (
    <div className="table-wrap">
      <table className="table">
        <caption className="visually-hidden">Tasks, most recently updated first</caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">Workflow</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              Version
            </th>
            <th scope="col">Updated</th>
            <th scope="col">Updated by</th>
          </tr>
        </thead>
        <tbody>
          {tasks.map((task) => (
            <tr key={task.id}>
              <th scope="row">
                <Link href={`/tasks/${encodeURIComponent(task.id)}`} className="mono task-link">
                  {task.id}
                </Link>
                <span className="subtle">{task.intentId}</span>
              </th>
              <td>
                {task.workflow.name} <span className="subtle">v{task.workflow.version}</span>
              </td>
              <td>
                <StatusBadge status={task.status} def={getWorkflowByDigest(task.workflow.digest)} />
              </td>
              <td className="num mono">{task.version}</td>
              <td>
                <DateTime value={task.updatedAt} />
              </td>
              <td>
                <Identity value={task.updatedBy} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
