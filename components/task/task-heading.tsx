import Link from "next/link";
import type { TaskView } from "@/lib/engine/tasks";
import type { WorkflowDefinition } from "@/lib/engine/workflow-definition";
import { shortDigest } from "@/lib/console/format";
import { DateTime } from "@/components/date-time";
import { Identity } from "@/components/identity";
import { StatusBadge } from "@/components/status-badge";
import type { ReactNode } from "react";

export function TaskHeading({ task, def, live }: { task: TaskView; def: WorkflowDefinition | undefined; live: ReactNode }) {
  return (
    <header className="page-header">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <ol>
          <li>
            <Link href="/tasks">Tasks</Link>
          </li>
          <li aria-current="page" className="mono">
            {task.id}
          </li>
        </ol>
      </nav>
      <div className="page-header__row">
        <h1 className="task-title">
          <span className="mono">{task.id}</span>
        </h1>
        <div className="task-title__status">
          <StatusBadge status={task.status} def={def} />
          <span className="version-pill" title="Every change increments the version; it is the compare-and-swap target">
            version {task.version}
          </span>
        </div>
        <div className="page-header__aside">{live}</div>
      </div>
      <dl className="facts facts--inline">
        <div>
          <dt>Workflow</dt>
          <dd>
            <Link href="/workflows">
              {task.workflow.name} v{task.workflow.version}
            </Link>{" "}
            <span className="mono subtle" title={task.workflow.digest}>
              {shortDigest(task.workflow.digest)}
            </span>
          </dd>
        </div>
        <div>
          <dt>Intent</dt>
          <dd className="mono">{task.intentId}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <DateTime value={task.createdAt} /> by <Identity value={task.createdBy} />
          </dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>
            <DateTime value={task.updatedAt} /> by <Identity value={task.updatedBy} />
          </dd>
        </div>
      </dl>
    </header>
  );
}
