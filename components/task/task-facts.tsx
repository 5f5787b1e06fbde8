import type { TaskState } from "@/lib/model/tasks/task-state";
import { gateNames } from "@/lib/model/tasks/task-state";
import { formatInteger, formatUsd } from "@/lib/adapters/console/shared/format";
import { Identity } from "@/components/identity";

export function GatesCard({ state }: { state: TaskState }) {
  return (
    <section className="card" aria-labelledby="gates-heading">
      <h2 id="gates-heading">Gates</h2>
      <ul className="gates">
        {gateNames.map((gate) => {
          const open = state.gates[gate];
          return (
            <li key={gate} className={open ? "gate gate--open" : "gate"}>
              <span className="gate__mark" aria-hidden="true">
                {open ? "✓" : "○"}
              </span>
              <span className="mono">{gate}</span>
              <span className="visually-hidden">{open ? ": true" : ": false"}</span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

export function SubtasksCard({ state }: { state: TaskState }) {
  const mandatoryOpen = state.subtasks.filter((s) => s.mandatory && s.status !== "COMPLETED").length;
  return (
    <section className="card card--wide" aria-labelledby="subtasks-heading">
      <h2 id="subtasks-heading">Subtasks</h2>
      {state.subtasks.length === 0 ? (
        <p className="subtle">No subtasks.</p>
      ) : (
        <>
          <p className="hint">
            {mandatoryOpen === 0
              ? "Every mandatory subtask is completed."
              : `${mandatoryOpen} mandatory subtask${mandatoryOpen === 1 ? "" : "s"} still open: completion waits for them.`}
          </p>
          <table className="table table--compact">
            <caption className="visually-hidden">Subtasks</caption>
            <thead>
              <tr>
                <th scope="col">Subtask</th>
                <th scope="col">Mandatory</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {state.subtasks.map((s) => (
                <tr key={s.id}>
                  <th scope="row">
                    {s.title} <span className="mono subtle">{s.id}</span>
                  </th>
                  <td>
                    {s.mandatory ? (
                      <span className="tag tag--strong">mandatory</span>
                    ) : (
                      <span className="subtle">optional</span>
                    )}
                  </td>
                  <td>
                    <span className={`sub-status sub-status--${s.status.toLowerCase()}`}>{s.status}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

export function BudgetCard({ state }: { state: TaskState }) {
  const {
    currency_committed_usd: committed,
    currency_spent_usd: spent,
    tokens_spent: tokens,
    hops_used: hops,
  } = state.budget;
  const ratio = committed > 0 ? Math.min(1, spent / committed) : 0;
  return (
    <section className="card" aria-labelledby="budget-heading">
      <h2 id="budget-heading">Budget</h2>
      <p className="budget__money">
        <strong>{formatUsd(spent)}</strong> spent of {formatUsd(committed)} committed
      </p>
      <meter
        className="budget__meter"
        min={0}
        max={1}
        low={0.7}
        high={0.9}
        optimum={0}
        value={ratio}
        aria-label={`${Math.round(ratio * 100)}% of the committed budget spent`}
      />
      <dl className="facts facts--grid">
        <div>
          <dt>Tokens</dt>
          <dd className="mono">{formatInteger(tokens)}</dd>
        </div>
        <div>
          <dt>Hops</dt>
          <dd className="mono">{formatInteger(hops)}</dd>
        </div>
      </dl>
    </section>
  );
}

export function AgentsCard({ state }: { state: TaskState }) {
  const groups = [
    { label: "Active", list: state.active_agents, tone: "active" },
    { label: "Completed", list: state.completed_agents, tone: "success" },
    { label: "Failed", list: state.failed_agents, tone: "danger" },
  ] as const;
  return (
    <section className="card" aria-labelledby="agents-heading">
      <h2 id="agents-heading">Agents</h2>
      <dl className="agents">
        {groups.map((g) => (
          <div key={g.label}>
            <dt>
              <span className={`dot dot--${g.tone}`} aria-hidden="true" />
              {g.label}
            </dt>
            <dd>
              {g.list.length === 0 ? (
                <span className="subtle">none</span>
              ) : (
                <ul>
                  {g.list.map((a) => (
                    <li key={a}>
                      <Identity value={a} />
                    </li>
                  ))}
                </ul>
              )}
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

export function ArtifactsCard({ state }: { state: TaskState }) {
  const a = state.artifacts;
  const entries = [
    ["Implementation plan", a.implementation_plan],
    ["Test results", a.test_results],
    ["Review report", a.review_report],
  ] as const;
  const any = entries.some(([, v]) => v) || (a.code_files?.length ?? 0) > 0;
  return (
    <section className="card" aria-labelledby="artifacts-heading">
      <h2 id="artifacts-heading">Artifacts</h2>
      {!any ? (
        <p className="subtle">No artifacts recorded.</p>
      ) : (
        <dl className="facts">
          {entries.map(([label, value]) =>
            value ? (
              <div key={label}>
                <dt>{label}</dt>
                <dd className="mono">{value}</dd>
              </div>
            ) : null,
          )}
          {a.code_files?.length ? (
            <div>
              <dt>Code files</dt>
              <dd>
                <ul className="mono">
                  {a.code_files.map((f) => (
                    <li key={f}>{f}</li>
                  ))}
                </ul>
              </dd>
            </div>
          ) : null}
        </dl>
      )}
    </section>
  );
}
