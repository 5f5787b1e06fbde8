import Link from "next/link";
import { RelativeTime } from "@/components/relative-time";
import { alertsHref, type AlertFilters, type AlertRow } from "@/lib/adapters/console/alerts/alerts";
import { formatDuration } from "@/lib/core/format-duration";
import { AlertStatusBadge, SeverityBadge } from "@/components/alerts/severity-badge";
import { TruncatedText } from "@/components/truncated-text";

/**
 * Newest first, or oldest first by the Age column's link: severity (colour,
 * word and glyph), what in words, the task, how old, how often seen.
 */
export function AlertTable({ rows, filters }: { rows: AlertRow[]; filters: AlertFilters }) {
  const oldestFirst = filters.order === "asc";
  return (
    <div className="table-wrap">
      <table className="table alert-table">
        <caption className="visually-hidden">Alerts, {oldestFirst ? "oldest" : "newest"} first</caption>
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
            {/* Newest first is the youngest age first: ascending by age. */}
            <th scope="col" aria-sort={oldestFirst ? "descending" : "ascending"}>
              <Link
                className="sort-link"
                href={alertsHref({ ...filters, order: oldestFirst ? undefined : "asc", cursor: undefined })}
                title={oldestFirst ? "Sort newest first" : "Sort oldest first"}
              >
                Age <span aria-hidden="true">{oldestFirst ? "↓" : "↑"}</span>
                <span className="visually-hidden">
                  , {oldestFirst ? "oldest" : "newest"} first: sort {oldestFirst ? "newest" : "oldest"} first
                </span>
              </Link>
            </th>
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
