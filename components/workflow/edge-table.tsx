import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { describeGuard } from "@/lib/adapters/console/shared/format";
import { ActorKinds } from "@/components/workflow/actor-kinds";

/** Every edge of a definition: who may take it and what must hold first. */
export function EdgeTable({ def }: { def: WorkflowDefinition }) {
  const rows = [
    ...def.transitions.map((t) => ({
      key: `${t.from}->${t.to}`,
      from: t.from,
      fromAny: false,
      to: t.to,
      by: t.by,
      guards: t.guards ?? [],
      description: t.description,
    })),
    ...(def.fromAnyNonTerminal ?? []).map((t) => ({
      key: `*->${t.to}`,
      from: "",
      fromAny: true,
      to: t.to,
      by: t.by,
      guards: t.guards ?? [],
      description: t.description,
    })),
  ];
  return (
    <div className="table-wrap">
      <table className="table table--compact">
        <caption className="visually-hidden">
          Transitions of {def.name} v{def.version}
        </caption>
        <thead>
          <tr>
            <th scope="col">From</th>
            <th scope="col">To</th>
            <th scope="col">Who may take it</th>
            <th scope="col">Guards</th>
            <th scope="col">Meaning</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key}>
              <td className="mono">{r.fromAny ? <em className="subtle">any active state</em> : r.from}</td>
              <td className="mono">{r.to}</td>
              <td>
                <ActorKinds kinds={r.by} />
              </td>
              <td>{r.guards.length ? r.guards.map(describeGuard).join("; ") : <span className="subtle">none</span>}</td>
              <td>{r.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The edges a definition names as invalid, with the invariant each would break. */
export function RejectionTable({ def }: { def: WorkflowDefinition }) {
  if (def.rejections.length === 0) return null;
  return (
    <div className="table-wrap">
      <table className="table table--compact">
        <caption className="visually-hidden">Transitions refused on purpose in {def.name}</caption>
        <thead>
          <tr>
            <th scope="col">Refused</th>
            <th scope="col">Invariant</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {def.rejections.map((r) => (
            <tr key={`${r.from}->${r.to}`}>
              <td className="mono">
                {r.from} → {r.to}
              </td>
              <td className="mono">{r.invariant}</td>
              <td>{r.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
