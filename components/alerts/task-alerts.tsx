import Link from "next/link";
import { can, type Principal } from "@/lib/model/permissions";
import { alertsHref } from "@/lib/adapters/console/alerts/alerts";
import { describeAlertKind } from "@/lib/model/alerts/alert-kinds";
import { unresolvedAlertsOfTask } from "@/lib/use-cases/alerts/alert-queries";
import { AlertStatusBadge, SeverityBadge } from "@/components/alerts/severity-badge";
import { consoleDb } from "@/lib/adapters/auth/session";

/** The task page's unresolved alerts (every kind, not only divergences), each linked to the alerts centre. Nothing when there are none. */
export async function TaskAlerts({ taskId, principal }: { taskId: string; principal: Principal }) {
  if (!can(principal, "alerts:read")) return null;
  const alerts = await unresolvedAlertsOfTask(await consoleDb(), taskId);
  if (alerts.length === 0) return null;
  const blocking = alerts.filter((a) => a.blocking).length;
  return (
    <section className="task-alerts card card--quiet" aria-labelledby="task-alerts-title">
      <h2 id="task-alerts-title">
        Alerts on this task ({alerts.length})
        {blocking > 0 ? <span className="tag tag--danger"> {blocking} blocking irreversible work</span> : null}
      </h2>
      <ul>
        {alerts.map((a) => (
          <li key={a.id}>
            <SeverityBadge severity={a.severity} />
            <Link href={`/alerts/${encodeURIComponent(a.id)}`}>{describeAlertKind(a.kind)}</Link>
            <AlertStatusBadge status={a.status} />
            {a.occurrences > 1 ? <span className="subtle">seen {a.occurrences}×</span> : null}
          </li>
        ))}
      </ul>
      <p>
        <Link href={alertsHref({ task: taskId })}>Every alert of this task, resolved ones included →</Link>
      </p>
    </section>
  );
}
