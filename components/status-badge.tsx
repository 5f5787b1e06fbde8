import type { WorkflowDefinition } from "@/lib/engine/workflow-definition";
import { statusTone } from "@/lib/console/status";

export function StatusBadge({ status, def }: { status: string; def: WorkflowDefinition | undefined }) {
  return <span className={`badge badge--${statusTone(def, status)}`}>{status}</span>;
}
