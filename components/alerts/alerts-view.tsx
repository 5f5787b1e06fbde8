import Link from "next/link";
import { alertsHref, severityInfo, type AlertsPageData } from "@/lib/adapters/console/alerts/alerts";
import { listTotal, pluralize } from "@/lib/adapters/console/shared/format";
import { EmptyState } from "@/components/empty-state";
import { LiveRefresh } from "@/components/live-refresh";
import { AlertFilters } from "@/components/alerts/alert-filters";
import { AlertTable } from "@/components/alerts/alert-table";
import { MonitorStrip } from "@/components/alerts/monitor-strip";
import { ExportLinks } from "@/components/export-links";

export function AlertsView({ data, canAct, role }: { data: AlertsPageData; canAct: boolean; role: string }) {
  const filtered = !!(data.filters.status || data.filters.severity || data.filters.kind || data.filters.task);
  return (
    <>
      <header className="page-header">
        <div className="page-header__row">
          <h1>Alerts</h1>
          <div className="page-header__aside">
            <LiveRefresh
              url="/api/console/alerts/latest"
              token={data.token}
              topic={{ kinds: ["alert"] }}
              what="alerts"
              intervalMs={5000}
            />
            <ExportLinks
              list="alerts"
              filters={{
                status: data.filters.status,
                severity: data.filters.severity,
                kind: data.filters.kind,
                task: data.filters.task,
              }}
              what="alerts"
            />
          </div>
        </div>
        <p className="lede">
          Everything stale or contradictory Verity has found: its record against the provider&apos;s, completions and
          successes without proof, writes and restores from an outdated view, broken invariants and audit chains.{" "}
          {pluralize(data.counts.open, "alert")} open or escalated
          {data.counts.blocking > 0 ? `, ${data.counts.blocking} blocking irreversible work` : ""}.
        </p>
        <ul className="alert-counts" aria-label="Open or escalated, by severity">
          {(["critical", "high", "medium"] as const).map((s) => (
            <li key={s}>
              <Link
                href={alertsHref({ status: "OPEN", severity: s })}
                className={`alert-severity alert-severity--${severityInfo[s].tone}`}
              >
                <span aria-hidden="true">{severityInfo[s].glyph}</span> {data.counts.bySeverity[s] ?? 0}{" "}
                {severityInfo[s].label.toLowerCase()}
              </Link>
            </li>
          ))}
        </ul>
      </header>
      <MonitorStrip monitor={data.monitor} />
      {canAct ? null : (
        <p className="notice notice--info" role="note">
          Read-only: your role (<strong>{role}</strong>) can see every alert, its evidence and its history, but not act
          on them. Acting needs the alerts:act permission.
        </p>
      )}
      {data.ignored.length > 0 ? (
        <p className="notice notice--warning" role="note">
          Ignored unknown filter{data.ignored.length === 1 ? "" : "s"}: {data.ignored.join(", ")}.
        </p>
      ) : null}
      <AlertFilters filters={data.filters} />
      {data.rows.length === 0 ? (
        filtered ? (
          <EmptyState title="No alerts match these filters">
            <p>
              Nothing matches. <Link href="/alerts">Show every alert</Link>.
            </p>
          </EmptyState>
        ) : (
          <EmptyState title="No alerts: every check holds">
            <p>Verity has not found anything stale or contradictory.</p>
            <p className="hint">
              The reconciler compares settled effects with the provider, and the invariant monitor re-checks task
              states, success evidence, unknown outcomes, refused writes and restores, and the audit chains. What they
              find lands here.
            </p>
          </EmptyState>
        )
      ) : (
        <>
          <p className="list-total" role="status" data-testid="alert-total">
            {listTotal(data.total, "alert", filtered)}
          </p>
          <AlertTable rows={data.rows} filters={data.filters} />
          <nav className="pagination" aria-label="Pages">
            <p className="pagination__info">
              {pluralize(data.rows.length, "alert")} on this page{data.filters.cursor ? " (not the first)" : ""}
            </p>
            <ul>
              <li>
                {data.filters.cursor ? (
                  <Link className="button" href={alertsHref({ ...data.filters, cursor: undefined })}>
                    ← First page
                  </Link>
                ) : (
                  <span className="button button--ghost" aria-disabled="true">
                    ← First page
                  </span>
                )}
              </li>
              <li>
                {data.nextCursor ? (
                  <Link className="button" href={alertsHref({ ...data.filters, cursor: data.nextCursor })} rel="next">
                    Next page →
                  </Link>
                ) : (
                  <span className="button button--ghost" aria-disabled="true">
                    No more alerts
                  </span>
                )}
              </li>
            </ul>
          </nav>
        </>
      )}
    </>
  );
}
