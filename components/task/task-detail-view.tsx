import type { ReactNode } from "react";
import type { Principal } from "@/lib/model/permissions";
import { MaskedFieldsNotice } from "@/components/masked-fields-notice";
import { can } from "@/lib/model/permissions";
import { isTerminal } from "@/lib/model/workflows/workflow-definition";
import { edgeKey, layoutWorkflowGraph } from "@/lib/adapters/console/tasks/workflow-graph";
import { usesGates } from "@/lib/adapters/console/shared/status";
import type { TaskDetail } from "@/lib/adapters/console/tasks/task-detail";
import { LiveRefresh } from "@/components/live-refresh";
import { GraphLegend, WorkflowGraph } from "@/components/workflow/workflow-graph";
import { NextStepsList } from "@/components/task/next-steps-list";
import { TaskHeading } from "@/components/task/task-heading";
import { TransitionPanel } from "@/components/task/transition-panel";
import { AgentsCard, ArtifactsCard, BudgetCard, GatesCard, SubtasksCard } from "@/components/task/task-facts";
import { TransitionTimeline } from "@/components/task/transition-timeline";
import { TaskCheckpointsCard } from "@/components/checkpoints/task-checkpoints-card";

/** `effects`: the External effects card (execution ledger, divergence alerts), shown below the state machine, before the facts: it is where money moves. */
export function TaskDetailView({
  detail,
  principal,
  transitionId,
  effects,
}: {
  detail: TaskDetail;
  principal: Principal;
  transitionId: string;
  effects?: ReactNode;
}) {
  const { task, def, steps } = detail;
  const terminal = def ? isTerminal(def, task.status) : false;
  const live = (
    <LiveRefresh
      url={`/api/console/tasks/${encodeURIComponent(task.id)}/version`}
      token={String(task.version)}
      topic={{ kinds: ["task"], about: task.id }}
      what="task"
    />
  );
  const allowed = new Set(steps.filter((s) => s.blockedBy.length === 0).map((s) => edgeKey(task.status, s.to)));
  const blocked = new Set(steps.filter((s) => s.blockedBy.length > 0).map((s) => edgeKey(task.status, s.to)));
  const pathText = [...detail.transitions]
    .reverse()
    .map((t) => t.toStatus)
    .filter((s, i, all) => s !== all[i - 1]);
  return (
    <>
      <TaskHeading task={task} def={def} live={live} />
      <MaskedFieldsNotice fields={detail.maskedFields} />
      <div className="detail-grid">
        <section className="card graph-card" aria-labelledby="graph-heading">
          <h2 id="graph-heading">State machine</h2>
          {def ? (
            <figure className="graph-frame">
              <WorkflowGraph
                layout={layoutWorkflowGraph(def)}
                idPrefix="task-graph"
                title={`State machine of ${def.name} v${def.version}, with this task in ${task.status}`}
                description={`Current state ${task.status}. Path taken: ${pathText.join(" → ")}. Possible next: ${
                  steps
                    .filter((s) => !s.blockedBy.length)
                    .map((s) => s.to)
                    .join(", ") || "none"
                }.`}
                highlight={{
                  current: task.status,
                  allowed,
                  blocked,
                  pathEdges: detail.path.edges,
                  pathStates: detail.path.states,
                }}
              />
              <figcaption>
                <GraphLegend showTaskMarks />
                <p className="hint">
                  Path taken: <span className="mono">{pathText.join(" → ")}</span>
                </p>
              </figcaption>
            </figure>
          ) : (
            <p className="notice notice--error" role="alert">
              This task is pinned to workflow digest <span className="mono">{task.workflow.digest}</span>, which this
              server does not have. Its state is shown, but no transition can be taken here.
            </p>
          )}
        </section>
        <div className="detail-side">
          <NextStepsList status={task.status} terminal={terminal} steps={steps} />
          {can(principal, "tasks:transition") ? (
            <TransitionPanel
              key={task.id}
              taskId={task.id}
              version={task.version}
              transitionId={transitionId}
              status={task.status}
              terminal={terminal}
              steps={detail.userSteps}
            />
          ) : (
            <section className="card card--quiet" aria-labelledby="readonly-heading">
              <h2 id="readonly-heading">Read-only</h2>
              <p>
                Your role (<strong>{principal.role}</strong>) can see this task and its whole history but cannot change
                it. Manual transitions need the tasks:transition permission.
              </p>
            </section>
          )}
          <TaskCheckpointsCard taskId={task.id} principal={principal} />
        </div>
      </div>
      {effects}
      <div className="facts-grid">
        <SubtasksCard state={task.state} />
        <BudgetCard state={task.state} />
        <AgentsCard state={task.state} />
        {def && usesGates(def) ? <GatesCard state={task.state} /> : null}
        <ArtifactsCard state={task.state} />
      </div>
      <TransitionTimeline transitions={detail.transitions} def={def} truncated={detail.timelineTruncated} />
    </>
  );
}
