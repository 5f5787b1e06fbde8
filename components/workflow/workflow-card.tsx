import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { layoutWorkflowGraph } from "@/lib/adapters/console/tasks/workflow-graph";
import { GraphLegend, WorkflowGraph } from "@/components/workflow/workflow-graph";
import { EdgeTable, RejectionTable } from "@/components/workflow/edge-table";

export function WorkflowCard({ def }: { def: WorkflowDefinition }) {
  const id = `wf-${def.name}-v${def.version}`;
  const states = Object.entries(def.states);
  const terminal = states.filter(([, s]) => s.terminal).map(([n]) => n);
  return (
    <section className="card workflow" aria-labelledby={`${id}-heading`}>
      <header className="workflow__header">
        <div>
          <h2 id={`${id}-heading`}>
            {def.title} <span className="mono subtle">{def.name}</span>{" "}
            <span className="version-pill">v{def.version}</span>
          </h2>
          <p className="workflow__description">{def.description}</p>
        </div>
        <dl className="facts facts--inline">
          <div>
            <dt>Digest</dt>
            <dd className="mono digest">{def.digest}</dd>
          </div>
          <div>
            <dt>Initial</dt>
            <dd className="mono">{def.initial}</dd>
          </div>
        </dl>
      </header>
      <div className="workflow__body">
        <figure className="graph-frame">
          <WorkflowGraph
            layout={layoutWorkflowGraph(def)}
            idPrefix={id}
            title={`State machine of ${def.name} v${def.version}`}
            description={`${states.length} states starting at ${def.initial}; terminal states ${terminal.join(", ")}. Edges that lead from any active state to ${[...new Set((def.fromAnyNonTerminal ?? []).map((t) => t.to))].join(", ") || "nothing"} are listed in the table rather than drawn.`}
          />
          <figcaption>
            <GraphLegend showTaskMarks={false} />
            {def.fromAnyNonTerminal?.length ? (
              <p className="hint">
                Edges from any active state to {[...new Set(def.fromAnyNonTerminal.map((t) => t.to))].join(", ")} are
                listed in the table below rather than drawn; a task&apos;s page draws the ones open to it.
              </p>
            ) : null}
          </figcaption>
        </figure>
        <div className="workflow__states">
          <h3>States</h3>
          <dl className="state-list">
            {states.map(([name, s]) => (
              <div key={name}>
                <dt className="mono">
                  {name}
                  {s.terminal ? <span className="tag">{s.success ? "terminal · success" : "terminal"}</span> : null}
                  {name === def.initial ? <span className="tag">initial</span> : null}
                </dt>
                <dd>
                  {s.description}
                  {s.requiresGates?.length ? (
                    <span className="subtle"> Requires {s.requiresGates.join(", ")}.</span>
                  ) : null}
                </dd>
              </div>
            ))}
          </dl>
        </div>
      </div>
      <h3>Transitions</h3>
      <EdgeTable def={def} />
      {def.rejections.length ? (
        <>
          <h3>Refused on purpose</h3>
          <RejectionTable def={def} />
        </>
      ) : null}
    </section>
  );
}
