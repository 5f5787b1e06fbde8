import {
  describeDivergenceKind,
  divergenceDifferences,
  summarizeEvidence,
} from "@/lib/adapters/console/reviews/reviews-format";
import type { DivergenceView } from "@/lib/adapters/console/reviews/reviews-ledger";
import { RelativeTime } from "@/components/relative-time";
import { Identity } from "@/components/identity";
import { EvidenceDetails } from "@/components/task/execution-evidence";
import { DivergenceResolveForm } from "@/components/task/divergence-resolve-form";

/** Open alerts with both sides' evidence and, for operators, a way to resolve each; resolved ones folded away below. */
export function DivergenceAlerts({
  open,
  resolved,
  canResolve,
  role,
  taskId,
}: {
  open: DivergenceView[];
  resolved: DivergenceView[];
  canResolve: boolean;
  role: string;
  taskId: string;
}) {
  if (open.length === 0 && resolved.length === 0) return null;
  return (
    <div className="divergences">
      {open.length ? (
        <>
          <p className="divergences__lead" role="note">
            <strong>Verity and a provider disagree.</strong> While an alert is open, nothing irreversible proceeds on
            this task.
          </p>
          <ul className="divergence-list">
            {open.map((a) => (
              <li key={a.id} className={`divergence divergence--${a.severity}`}>
                <DivergenceBody alert={a} />
                {canResolve ? (
                  <DivergenceResolveForm key={a.id} alertId={a.id} taskId={taskId} version={a.version} />
                ) : (
                  <p className="hint">Read-only: your role ({role}) cannot resolve alerts.</p>
                )}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {resolved.length ? (
        <details className="divergences__resolved">
          <summary>
            {resolved.length} resolved divergence alert{resolved.length === 1 ? "" : "s"}
          </summary>
          <ul className="divergence-list">
            {resolved.map((a) => (
              <li key={a.id} className="divergence divergence--resolved">
                <DivergenceBody alert={a} />
                <p className="divergence__resolution">
                  Resolved by {a.resolvedBy ? <Identity value={a.resolvedBy} /> : "someone"}
                  {a.resolvedAt ? (
                    <>
                      {" "}
                      <RelativeTime value={a.resolvedAt} />
                    </>
                  ) : null}
                  {a.resolution ? <>: “{a.resolution}”</> : null}
                </p>
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

function DifferencesTable({ alert }: { alert: DivergenceView }) {
  const rows = divergenceDifferences(alert.internal, alert.external);
  if (rows.length === 0) return null;
  return (
    <table className="table table--compact differences">
      <caption className="visually-hidden">Fields that differ</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Verity asked</th>
          <th scope="col">The provider has</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.field}>
            <th scope="row" className="mono">
              {r.field}
            </th>
            <td className="mono">{r.ours}</td>
            <td className="mono differences__theirs">{r.theirs}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function DivergenceBody({ alert }: { alert: DivergenceView }) {
  return (
    <>
      <p className="divergence__head">
        <span className={`severity severity--${alert.severity}`}>{alert.severity}</span>
        <span className="divergence__kind">{describeDivergenceKind(alert.kind)}</span>
        <span className="mono subtle">{alert.kind}</span>
      </p>
      <p className="divergence__message">{alert.message}</p>
      <DifferencesTable alert={alert} />
      <div className="divergence__sides">
        <div>
          <p className="divergence__side-title">Verity says</p>
          <EvidenceDetails evidence={alert.internal} summary={summarizeEvidence(alert.internal)} label="Internal" />
        </div>
        <div>
          <p className="divergence__side-title">The provider says</p>
          <EvidenceDetails evidence={alert.external} summary={summarizeEvidence(alert.external)} label="External" />
        </div>
      </div>
      <p className="hint">
        Raised <RelativeTime value={alert.createdAt} />
        {alert.executionId ? (
          <>
            {" "}
            on execution <span className="mono">{alert.executionId}</span>
          </>
        ) : null}
        .
      </p>
    </>
  );
}
