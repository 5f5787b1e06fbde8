import Link from "next/link";
import { alertStatusInfo, historyActionText, type AlertDetailData } from "@/lib/adapters/console/alerts/alerts";
import type { AlertAction } from "@/lib/adapters/console/alerts/alerts-form";
import { RelativeTime } from "@/components/relative-time";
import { LiveRefresh } from "@/components/live-refresh";
import { AlertStatusBadge, SeverityBadge } from "@/components/alerts/severity-badge";
import { AlertActionPanel } from "@/components/alerts/alert-action-panel";
import { JsonBlock } from "@/components/task/execution-evidence";

function actionsFor(data: AlertDetailData): AlertAction[] {
  const status = data.alert.status;
  if (status === "RESOLVED") return [];
  const out: AlertAction[] = [];
  if (status === "OPEN" || status === "ESCALATED") out.push("acknowledge");
  if (status === "OPEN" || status === "ACKNOWLEDGED") out.push("escalate");
  if (data.alert.executionId) out.push("reconcile");
  out.push("resolve");
  return out;
}

function Json({ value }: { value: unknown }) {
  return <JsonBlock value={value ?? null} className="evidence__json alert-evidence__json" />;
}

export function AlertDetailView({ data, canAct, role }: { data: AlertDetailData; canAct: boolean; role: string }) {
  const { alert, row } = data;
  const actions = actionsFor(data);
  return (
    <>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <Link href="/alerts">Alerts</Link> / <span className="mono">{alert.id}</span>
      </nav>
      <header className="page-header">
        <div className="page-header__row">
          <h1 className="alert-title">
            <SeverityBadge severity={alert.severity} /> {row.kindText}
          </h1>
          <div className="page-header__aside">
            <LiveRefresh
              url={`/api/console/alerts/${encodeURIComponent(alert.id)}/version`}
              token={data.token}
              topic={{ kinds: ["alert"], about: alert.id }}
              what="alert"
            />
          </div>
        </div>
        <p className="lede">{alert.message}</p>
        <dl className="facts facts--inline">
          <div>
            <dt>Status</dt>
            <dd>
              <AlertStatusBadge status={alert.status} />{" "}
              <span className="subtle">{alertStatusInfo[alert.status].meaning}</span>
            </dd>
          </div>
          <div>
            <dt>Blocks irreversible work</dt>
            <dd>
              {row.blocking ? (
                <strong className="alert-blocking">
                  Yes — no refund or other irreversible call proceeds on its task
                </strong>
              ) : (
                "No"
              )}
            </dd>
          </div>
          <div>
            <dt>Task</dt>
            <dd>
              {data.task ? (
                <>
                  <Link href={`/tasks/${encodeURIComponent(data.task.id)}`} className="mono task-link">
                    {data.task.id}
                  </Link>{" "}
                  <span className="subtle">
                    {data.task.status}, version {data.task.version}
                  </span>
                </>
              ) : alert.taskId ? (
                <span className="mono">{alert.taskId}</span>
              ) : (
                <span className="subtle">none (the alert is about the record itself)</span>
              )}
            </dd>
          </div>
          {data.execution ? (
            <div>
              <dt>Execution</dt>
              <dd>
                <span className="mono">{data.execution.tool}</span>{" "}
                <span className="mono subtle">{data.execution.idempotencyKey}</span> · {data.execution.status}
              </dd>
            </div>
          ) : null}
          <div>
            <dt>Raised</dt>
            <dd>
              <RelativeTime value={alert.createdAt} /> by the {alert.source}
            </dd>
          </div>
          <div>
            <dt>Seen</dt>
            <dd>
              {alert.occurrences}× · last <RelativeTime value={alert.lastSeenAt} />
            </dd>
          </div>
          <div>
            <dt>Version</dt>
            <dd className="mono">{alert.version}</dd>
          </div>
        </dl>
      </header>

      <section aria-labelledby="evidence-title" className="card">
        <h2 id="evidence-title">Evidence</h2>
        <div className="alert-evidence">
          <div>
            <h3 className="alert-evidence__side">Verity&apos;s record (internal)</h3>
            <Json value={alert.internal} />
          </div>
          <div>
            <h3 className="alert-evidence__side">What contradicts it (external, or the rows that prove it)</h3>
            <Json value={alert.external} />
          </div>
        </div>
      </section>

      <section aria-labelledby="actions-title" className="card">
        <h2 id="actions-title">Actions</h2>
        {alert.status === "RESOLVED" ? (
          <p>
            Resolved by <span className="mono">{alert.resolvedBy}</span>
            {alert.resolvedAt ? (
              <>
                {" "}
                <RelativeTime value={alert.resolvedAt} />
              </>
            ) : null}
            : {alert.resolution}
          </p>
        ) : canAct ? (
          <AlertActionPanel alertId={alert.id} version={alert.version} actions={actions} />
        ) : (
          <p className="notice notice--info" role="note">
            Your role (<strong>{role}</strong>) can read this alert but not act on it: acknowledging, escalating,
            reconciling and resolving need the alerts:act permission (operators, engineers, admins).
          </p>
        )}
      </section>

      <section aria-labelledby="history-title" className="card">
        <h2 id="history-title">History</h2>
        {data.history.length === 0 ? (
          <p className="subtle">No audit entries (an alert raised before the audit log existed).</p>
        ) : (
          <ol className="alert-history">
            {data.history.map((e) => {
              const details = (e.details ?? {}) as Record<string, unknown>;
              const reason =
                typeof details.reason === "string"
                  ? details.reason
                  : typeof details.resolution === "string"
                    ? details.resolution
                    : null;
              return (
                <li key={e.id} className="alert-history__item">
                  <p className="alert-history__meta">
                    <strong>{historyActionText[e.action] ?? e.action}</strong> · <span className="mono">{e.actor}</span>{" "}
                    · <RelativeTime value={e.at} />
                  </p>
                  {reason ? <p className="alert-history__reason">{reason}</p> : null}
                  {typeof details.task_note === "string" ? <p className="subtle">{details.task_note}</p> : null}
                  {details.provider ? (
                    <details>
                      <summary>What the provider said</summary>
                      <Json value={details.provider} />
                    </details>
                  ) : null}
                </li>
              );
            })}
          </ol>
        )}
      </section>
    </>
  );
}
