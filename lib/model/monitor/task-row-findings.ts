import type { AlertKind } from "@/lib/model/alerts/alert-kinds";
import { TaskStateSchema } from "@/lib/model/tasks/task-state";
import { checkStateInvariants } from "@/lib/model/tasks/transition-rules";
import { getWorkflowByDigest } from "@/lib/model/workflows";

/**
 * Stored task states: TaskState v2, the workflow's state invariants, and the
 * columns that repeat the document. The transition rules refuse all of these,
 * so a violation was written around them (SQL, a bad restore, a bug). Judged
 * here for the invariant monitor, which raises an alert for each finding, and
 * for the consistency checker, which reports them.
 */

export interface TaskRowLike {
  id: string;
  status: string;
  version: number;
  state: unknown;
  workflowDigest: string;
  workflowName: string;
  updatedBy: string;
}

/** An alert a stored task row calls for, in the shape lib/use-cases/alerts/divergence.ts raises (the caller names the source). */
export interface TaskRowFinding {
  taskId: string;
  kind: AlertKind;
  message: string;
  internal: unknown;
  external: unknown;
  fingerprint?: string;
  finalOnceResolved?: boolean;
}

/** The alerts a stored task row calls for (pure). Exported for unit tests. */
export function inspectTaskRow(row: TaskRowLike): TaskRowFinding[] {
  const internal = {
    task_status: row.status,
    task_version: row.version,
    updated_by: row.updatedBy,
    workflow: row.workflowName,
  };
  const broken = (invariants: Array<{ invariant: string; message: string }>): TaskRowFinding => ({
    taskId: row.id,
    kind: "state_invariant_broken",
    message: `Task ${row.id} (version ${row.version}, ${row.status}) is stored in a state the rules would never write: ${invariants.map((v) => v.message).join(" ")}`,
    internal,
    external: { violations: invariants, stored_state: row.state },
    fingerprint: `state_invariant_broken:${row.id}:v${row.version}`,
    finalOnceResolved: true,
  });
  const def = getWorkflowByDigest(row.workflowDigest);
  if (!def)
    return [
      broken([
        {
          invariant: "workflow_definition_available",
          message: `Its workflow digest ${row.workflowDigest} is unknown to this server.`,
        },
      ]),
    ];
  const parsed = TaskStateSchema.safeParse(row.state);
  if (!parsed.success) {
    return [
      broken(
        parsed.error.issues
          .slice(0, 10)
          .map((i) => ({ invariant: "task_state_schema", message: `${i.path.join(".") || "state"}: ${i.message}.` })),
      ),
    ];
  }
  const state = parsed.data;
  const violations = checkStateInvariants(def, state);
  const columns: Array<{ invariant: string; message: string }> = [];
  if (state.status !== row.status)
    columns.push({
      invariant: "status_column_matches_state",
      message: `The status column says ${row.status}, the state document ${state.status}.`,
    });
  if (state.version !== row.version)
    columns.push({
      invariant: "version_column_matches_state",
      message: `The version column says ${row.version}, the state document ${state.version}.`,
    });
  if (state.task_id !== row.id)
    columns.push({ invariant: "task_id_matches_state", message: `The state document names task ${state.task_id}.` });
  const out: TaskRowFinding[] = [];
  const mandatory = violations.filter((v) => v.invariant === "mandatory_subtasks_completed");
  const others = [...violations.filter((v) => v.invariant !== "mandatory_subtasks_completed"), ...columns];
  if (mandatory.length > 0) {
    const open = state.subtasks.filter((s) => s.mandatory && s.status !== "COMPLETED");
    // The reconciler's verifySettled raises the same kind with the default fingerprint: one alert, whoever sees it first.
    out.push({
      taskId: row.id,
      kind: "completed_with_open_mandatory_subtask",
      message: `Task ${row.id} is ${row.status} with mandatory subtask(s) ${open.map((s) => s.id).join(", ")} not completed.`,
      internal,
      external: { open_mandatory_subtasks: open },
      finalOnceResolved: true,
    });
  }
  if (others.length > 0) out.push(broken(others));
  return out;
}
