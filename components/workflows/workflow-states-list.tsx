import type { OutgoingEdge, StateItem, WorkflowStates } from "@/lib/adapters/console/workflows/workflow-states";
import type { NamedRejection } from "@/lib/model/workflows/workflow-definition";
import { ActorKinds } from "@/components/workflow/actor-kinds";

function EdgeItem({ edge, from }: { edge: OutgoingEdge; from: string }) {
  return (
    <li className="wf-edge" data-from={from} data-to={edge.to}>
      <span className="wf-edge__to">
        <span aria-hidden="true">→ </span>
        <span className="mono">{edge.to}</span>
      </span>
      <span className="wf-edge__by">
        by <ActorKinds kinds={edge.by} />
      </span>
      {edge.guards.length ? <span className="wf-edge__guards">only when {edge.guards.join("; ")}</span> : null}
      <span className="wf-edge__meaning">{edge.description}</span>
    </li>
  );
}

function StateEntry({ state }: { state: StateItem }) {
  const id = `state-${state.name}`;
  return (
    <li className={state.terminal ? "wf-state wf-state--terminal" : "wf-state"}>
      <h3 id={id} className="wf-state__name">
        <span className="mono">{state.name}</span>
        {state.initial ? <span className="tag">initial</span> : null}
        {state.terminal ? <span className="tag">{state.success ? "terminal · success" : "terminal"}</span> : null}
        {state.checkpoint ? <span className="tag">checkpoint on entry</span> : null}
      </h3>
      <p className="wf-state__description">{state.description}</p>
      {state.requiresGates.length ? (
        <p className="wf-state__fact">
          Requires <span className="mono">{state.requiresGates.join(", ")}</span>
        </p>
      ) : null}
      {state.tools !== "any" ? (
        <p className="wf-state__fact">
          Tools:{" "}
          {state.tools.length ? (
            <span className="mono">{state.tools.join(", ")}</span>
          ) : (
            <span className="subtle">none may be called here</span>
          )}
        </p>
      ) : null}
      {state.edges.length ? (
        <ul className="wf-edges" aria-label={`Transitions out of ${state.name}`}>
          {state.edges.map((e) => (
            <EdgeItem key={e.to} edge={e} from={state.name} />
          ))}
        </ul>
      ) : state.terminal ? null : (
        <p className="hint">Only the transitions from any active state lead out of here.</p>
      )}
    </li>
  );
}

/**
 * A version's graph as text: each state with the transitions out of it, who
 * may take each and what must hold first. Reads on a phone, and it is what a
 * screen reader and a search in the page find.
 */
export function WorkflowStatesList({ graph, label }: { graph: WorkflowStates; label: string }) {
  return (
    <>
      <ol className="wf-states" aria-label={`States of ${label}`}>
        {graph.states.map((s) => (
          <StateEntry key={s.name} state={s} />
        ))}
      </ol>
      {graph.fromAnyActive.length ? (
        <section className="wf-from-any" aria-labelledby="from-any-heading">
          <h3 id="from-any-heading">From any active state</h3>
          <ul className="wf-edges" aria-label="Transitions from any active state">
            {graph.fromAnyActive.map((e) => (
              <EdgeItem key={e.to} edge={e} from="any active state" />
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
}

export function GatesList({ graph, label }: { graph: WorkflowStates; label: string }) {
  if (graph.gates.length === 0) return <p className="subtle">This version names no gates.</p>;
  return (
    <ul className="wf-gates" aria-label={`Gates of ${label}`}>
      {graph.gates.map((g) => (
        <li key={g.gate} className="wf-gate">
          <p className="wf-gate__name mono">{g.gate}</p>
          <p>
            {g.rule ? (
              <>
                Set by a person: <strong>{g.rule.roles.join(" or ")}</strong>
                {g.rule.notSetBySameAs?.length ? <>, not whoever set {g.rule.notSetBySameAs.join(", ")}</> : null}.{" "}
                {g.rule.description}
                {g.ruleFrom && g.ruleFrom !== "this version" ? (
                  <span className="subtle">
                    {" "}
                    (This version says nothing about who sets it; its tasks follow v{g.ruleFrom.version}&apos;s rule.)
                  </span>
                ) : null}
              </>
            ) : (
              <>Set by whoever may move the task (the agent&apos;s own progress).</>
            )}
          </p>
          {g.requiredBy.length || g.guardsOn.length ? (
            <p className="subtle">
              {g.requiredBy.length ? <>Required in {g.requiredBy.join(", ")}. </> : null}
              {g.guardsOn.length ? <>Guards {g.guardsOn.join(", ")}.</> : null}
            </p>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

export function RejectionsList({ rejections, label }: { rejections: readonly NamedRejection[]; label: string }) {
  if (rejections.length === 0) return <p className="subtle">This version names no refused transitions.</p>;
  return (
    <ul className="wf-rejections" aria-label={`Transitions refused on purpose in ${label}`}>
      {rejections.map((r) => (
        <li key={`${r.from}->${r.to}`} className="wf-rejection">
          <p className="mono">
            {r.from} → {r.to}
          </p>
          <p>
            <code>{r.invariant}</code>: {r.message}
          </p>
        </li>
      ))}
    </ul>
  );
}
