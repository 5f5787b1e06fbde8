import Link from "next/link";
import type { ReactNode } from "react";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { shortDigest } from "@/lib/adapters/console/shared/format";
import { DateTime } from "@/components/date-time";
import { DetailPageHeader, Fact } from "@/components/detail-page-header";
import { Identity } from "@/components/identity";
import { StatusBadge } from "@/components/status-badge";

export function TaskHeading({
  task,
  def,
  live,
}: {
  task: TaskView;
  def: WorkflowDefinition | undefined;
  live: ReactNode;
}) {
  return (
    <DetailPageHeader
      parent={{ href: "/tasks", label: "Tasks" }}
      id={task.id}
      title={
        <h1 className="task-title">
          <span className="mono">{task.id}</span>
        </h1>
      }
      status={<StatusBadge status={task.status} def={def} />}
      version={task.version}
      versionHint="Every change increments the version; it is the compare-and-swap target"
      live={live}
    >
      <Fact term="Workflow">
        <Link href="/workflows">
          {task.workflow.name} v{task.workflow.version}
        </Link>{" "}
        <span className="mono subtle" title={task.workflow.digest}>
          {shortDigest(task.workflow.digest)}
        </span>
      </Fact>
      <Fact term="Intent" className="mono">
        {task.intentId}
      </Fact>
      <Fact term="Created">
        <DateTime value={task.createdAt} /> by <Identity value={task.createdBy} />
      </Fact>
      <Fact term="Updated">
        <DateTime value={task.updatedAt} /> by <Identity value={task.updatedBy} />
      </Fact>
    </DetailPageHeader>
  );
}
