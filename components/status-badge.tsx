import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { statusTone } from "@/lib/adapters/console/shared/status";

export function StatusBadge({ status, def }: { status: string; def: WorkflowDefinition | undefined }) {
  return <span className={`badge badge--${statusTone(def, status)}`}>{status}</span>;
}
