import Link from "next/link";
import type { ReactNode } from "react";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { shortDigest } from "@/lib/adapters/console/shared/format";
import { RelativeTime } from "@/components/relative-time";
import { DetailPageHeader, Fact } from "@/components/detail-page-header";
import { Identity } from "@/components/identity";
import { StatusBadge } from "@/components/status-badge";
import { CopyButton } from "@/components/copy-button";

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
        <div className="with-copy">
          <h1 className="task-title">
            <span className="mono">{task.id}</span>
          </h1>
          <CopyButton value={task.id} what="task id" />
        </div>
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
      <Fact term="Intent">
        <span className="mono">{task.intentId}</span>
        <CopyButton value={task.intentId} what="intent id" />
      </Fact>
      <Fact term="Created">
        <RelativeTime value={task.createdAt} /> by <Identity value={task.createdBy} />
      </Fact>
      <Fact term="Updated">
        <RelativeTime value={task.updatedAt} /> by <Identity value={task.updatedBy} />
      </Fact>
    </DetailPageHeader>
  );
}
