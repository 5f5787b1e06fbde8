import { newId } from "@/lib/core/ids";
import type { Principal } from "@/lib/model/permissions";
import { gateRulesOf } from "@/lib/model/workflows";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import type { GateName } from "@/lib/model/tasks/task-state";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import type { TransitionView } from "@/lib/stores/tasks/task-views";
import { GateApprovalForm } from "@/components/gates/gate-approval-form";

/**
 * The task's human gates (the workflow definition's GateRules): who approved
 * each, or who may, and the approval form for a person whose role may. What
 * this shows is a courtesy: approveGate checks role and four eyes itself.
 */
export function GateApprovals({
  task,
  def,
  transitions,
  principal,
}: {
  task: TaskView;
  def: WorkflowDefinition | undefined;
  /** Newest first, as the timeline holds them. */
  transitions: readonly TransitionView[];
  principal: Principal;
}) {
  const rules = def ? Object.entries(gateRulesOf(def)) : [];
  if (rules.length === 0) return null;
  const terminal = def?.states[task.status]?.terminal === true;
  return (
    <section className="card" aria-labelledby="gate-approvals-heading">
      <h2 id="gate-approvals-heading">Approvals</h2>
      <p className="subtle">
        These gates are a person&apos;s decision: agents cannot set them. Each approval is recorded with its reason.
      </p>
      <ul className="gate-list">
        {rules.map(([gate, rule]) => {
          const name = gate as GateName;
          const approvedBy = task.state.gates[name]
            ? transitions.find((t) => t.patch.gates?.[name] === true)
            : undefined;
          const mayApprove =
            principal.kind === "user" && rule && rule.roles.includes(principal.role) && !task.state.gates[name];
          return (
            <li key={gate} className="gate-list__item">
              <p>
                <strong className="mono">{gate}</strong>:{" "}
                {task.state.gates[name] ? (
                  <span className="badge badge--success">approved</span>
                ) : (
                  <span className="badge badge--neutral">not approved</span>
                )}{" "}
                {approvedBy ? `by ${approvedBy.actor}` : ""}
              </p>
              <p className="hint">
                {rule?.description} Set by {rule?.roles.join(" or ")}
                {rule?.notSetBySameAs?.length ? `, not by whoever approved ${rule.notSetBySameAs.join(", ")}` : ""}.
              </p>
              {mayApprove && !terminal ? (
                <GateApprovalForm taskId={task.id} gate={gate} version={task.version} transitionId={newId("tr")} />
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
