import Link from "next/link";
import { RelativeTime } from "@/components/relative-time";
import type { AlertRow } from "@/lib/adapters/console/alerts/alerts";
import { formatDuration } from "@/lib/core/format-duration";
import { AlertStatusBadge, SeverityBadge } from "@/components/alerts/severity-badge";
import { TruncatedText } from "@/components/truncated-text";

/** Newest first: severity (colour, word and glyph), what in words, the task, how old, how often seen. */
export function AlertTable({ rows }: { rows: AlertRow[] }) {
  return (
    <div className="table-wrap">
      <table className="table alert-table">
        <caption className="visually-hidden">Alerts, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col">Alert</th>
            <th scope="col" className="col-p2">
              Task
            </th>
            <th scope="col" className="col-p2">
              Status
            </th>
            <th scope="col">Age</th>
            <th scope="col" className="col-p3">
              Seen
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} className={r.status === "RESOLVED" ? "alert-row--closed" : undefined}>
              <td>
                <SeverityBadge severity={r.severity} />
              </td>
              <th scope="row" className="alert-row__what">
                <Link href={`/alerts/${encodeURIComponent(r.id)}`} className="alert-row__kind">
                  {r.kindText}
                </Link>
                <span className="alert-row__message">{r.message}</span>
                {r.blocking ? <span className="tag tag--danger">blocks irreversible work</span> : null}
              </th>
              <td className="col-p2">
                {r.taskId ? (
                  <Link href={`/tasks/${encodeURIComponent(r.taskId)}`} className="task-link">
                    <TruncatedText value={r.taskId} className="mono" />
                  </Link>
                ) : (
                  <span className="subtle">no task</span>
                )}
              </td>
              <td className="col-p2">
                <AlertStatusBadge status={r.status} />
              </td>
              <td>
                <span title={r.createdAt.toISOString()}>{formatDuration(r.ageMs)}</span>
              </td>
              <td className="col-p3">
                <span className="alert-row__seen">{r.occurrences}×</span>
                {r.occurrences > 1 ? (
                  <span className="subtle alert-row__last">
                    last <RelativeTime value={r.lastSeenAt} />
                  </span>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
