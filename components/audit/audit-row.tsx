import Link from "next/link";
import type { ReactNode } from "react";
import type { AuditRowView } from "@/lib/adapters/console/audit/audit-format";
import { shortIdentity } from "@/lib/adapters/console/shared/format";
import { RelativeTime } from "@/components/relative-time";
import { statusTone } from "@/lib/adapters/console/shared/status";

/** From → to: statuses as badges (tone from the name), versions as text. */
function Change({ row }: { row: AuditRowView }) {
  const statuses =
    row.fromStatus && row.toStatus && row.fromStatus !== row.toStatus ? (
      <>
        <span className={`badge badge--${statusTone(undefined, row.fromStatus)}`}>{row.fromStatus}</span>{" "}
        <span aria-label="to">→</span>{" "}
        <span className={`badge badge--${statusTone(undefined, row.toStatus)}`}>{row.toStatus}</span>
      </>
    ) : row.toStatus ? (
      <span className={`badge badge--${statusTone(undefined, row.toStatus)}`}>{row.toStatus}</span>
    ) : null;
  const versions =
    row.toVersion !== null
      ? row.fromVersion !== null
        ? `v${row.fromVersion} → v${row.toVersion}`
        : `v${row.toVersion}`
      : null;
  if (!statuses && !versions) return null;
  return (
    <span className="audit-row__change">
      {statuses}
      {versions ? <span className="audit-row__versions mono">{versions}</span> : null}
    </span>
  );
}

/**
 * One event in words: what, from → to, when, who, links. Fixed height (two
 * lines, long text cut with an ellipsis and whole in the tooltip), so the
 * history can window its rows by arithmetic.
 */
export function AuditRowContent({
  row,
  showTask = false,
  action,
  actorHref,
}: {
  row: AuditRowView;
  showTask?: boolean;
  /** A control at the end of the second line (the history's Annotate button). */
  action?: ReactNode;
  /** Where the actor's name leads: the same list filtered to that actor. */
  actorHref?: (actor: string) => string;
}) {
  return (
    <>
      <div className="audit-row__line">
        <span className={`audit-kind audit-kind--${row.kind}`}>{row.kindLabel}</span>
        <span className="audit-row__title" title={row.title}>
          {row.title}
        </span>
        <Change row={row} />
      </div>
      <div className="audit-row__line audit-row__meta">
        <RelativeTime value={row.at} />
        {actorHref ? (
          <Link href={actorHref(row.actor)} className="identity" title={`Only entries by ${row.actor}`}>
            {shortIdentity(row.actor)}
          </Link>
        ) : (
          <span className="identity" title={row.actor}>
            {shortIdentity(row.actor)}
          </span>
        )}
        <span className={`kind kind--${row.actorKind}`}>{row.actorKind}</span>
        {showTask && row.taskId ? (
          <span>
            task{" "}
            <Link href={`/tasks/${encodeURIComponent(row.taskId)}`} className="mono">
              {row.taskId}
            </Link>{" "}
            (<Link href={`/tasks/${encodeURIComponent(row.taskId)}/history`}>history</Link>)
          </span>
        ) : null}
        {row.links.map((l) => (
          <Link key={l.href} href={l.href}>
            {l.label}
          </Link>
        ))}
        {row.detail ? (
          <span className="audit-row__detail" title={row.detail}>
            “{row.detail}”
          </span>
        ) : null}
        <span
          className="audit-row__where subtle mono"
          title={`${row.action} · ${row.stream} seq ${row.seq} · ${row.id}`}
        >
          {row.stream.split(":")[0]} #{row.seq}
        </span>
        {action}
      </div>
    </>
  );
}
