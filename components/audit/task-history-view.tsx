import Link from "next/link";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { utcInstant, type AuditSearchParams } from "@/lib/adapters/console/audit/audit-query";
import { taskHref, taskHistoryHref } from "@/lib/adapters/console/audit/audit-format";
import { statusTone } from "@/lib/adapters/console/shared/status";
import { HistoryFilters } from "@/components/audit/history-filters";
import { TaskHistoryWithAnnotations } from "@/components/audit/task-history-annotations";
import { VerifiedBadge } from "@/components/audit/verified-badge";
import "@/components/audit/audit.css";

/**
 * One task's whole record on one page: transitions, executions and their
 * reconciliations, reviews and decisions, checkpoints and restores, alerts,
 * merged from the audit log in commit order, with the verified badge of the
 * chains they are in.
 */
export function TaskHistoryView({
  task,
  filters,
  canVerify,
  canAnnotate,
  canExport,
  role,
}: {
  task: TaskView;
  filters: AuditSearchParams;
  canVerify: boolean;
  canAnnotate: boolean;
  /** audit:export: the history's download is an audit export of this task's entries, recorded as one. */
  canExport: boolean;
  role: string;
}) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) query.set(k, v);
  const queryString = query.toString();
  const orderLabel = filters.order === "asc" ? "oldest first" : "newest first";
  return (
    <>
      <header className="page-header">
        <nav aria-label="Breadcrumb" className="breadcrumb">
          <ol>
            <li>
              <Link href="/tasks">Tasks</Link>
            </li>
            <li>
              <Link href={taskHref(task.id)} className="mono">
                {task.id}
              </Link>
            </li>
            <li aria-current="page">History</li>
          </ol>
        </nav>
        <div className="page-header__row">
          <h1 className="task-title">
            History of <span className="mono">{task.id}</span>
          </h1>
          <div className="task-title__status">
            <span className={`badge badge--${statusTone(undefined, task.status)}`}>{task.status}</span>
            <span className="version-pill" title="The task's current version">
              version {task.version}
            </span>
          </div>
        </div>
        <p className="hint">
          Every change of this task, its side effects and their reconciliations, reviews and decisions, checkpoints and
          restores, and alerts, as the audit log recorded them, in the order they were committed. Times are UTC.
        </p>
        {canVerify ? (
          <VerifiedBadge
            url={`/api/console/tasks/${encodeURIComponent(task.id)}/history/verify`}
            what="this task's chains"
          />
        ) : (
          <p className="audit-badge audit-badge--none">
            Chain verification is for roles with the audit:read permission (auditors, engineers, admins); your role (
            {role}) reads the history without it.
          </p>
        )}
      </header>
      <HistoryFilters action={taskHistoryHref(task.id)} params={filters} />
      <TaskHistoryWithAnnotations
        taskId={task.id}
        queryString={queryString}
        orderLabel={orderLabel}
        canAnnotate={canAnnotate}
        role={role}
      />
      <section className="card history-export" aria-labelledby="history-export-heading">
        <h2 id="history-export-heading">Download this history</h2>
        {canExport ? (
          <HistoryExportForm taskId={task.id} filters={filters} />
        ) : (
          <p className="hint">
            A download of the history is an export of the audit log (every line verifiable), which needs the
            audit:export permission (auditors and admins); your role ({role}) reads it here.
          </p>
        )}
      </section>
    </>
  );
}

/**
 * The audit export's own form (app/api/v1/audit/export/route.ts, as on
 * /audit): this task and the page's filters as hidden fields, the format as
 * the button pressed; POST because taking the copy is recorded.
 */
function HistoryExportForm({ taskId, filters }: { taskId: string; filters: AuditSearchParams }) {
  const fields: Array<[string, string]> = [["task", taskId]];
  for (const key of ["kind", "actor", "from", "to"] as const) {
    const value = filters[key];
    if (value) fields.push([key, key === "from" || key === "to" ? utcInstant(value) : value]);
  }
  return (
    <form method="post" action="/api/v1/audit/export" className="audit-export" data-testid="history-export">
      <p>
        Every event these filters select, oldest first, with seq, prev_hash and hash on every line, so whoever holds the
        file can verify it (<span className="mono">npm run audit:verify -- --export &lt;file&gt;</span>). The download
        is itself recorded.
      </p>
      {fields.map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <div className="button-row">
        <button type="submit" name="format" value="csv" className="button">
          Download CSV
        </button>
        <button type="submit" name="format" value="jsonl" className="button">
          Download JSON Lines
        </button>
      </div>
    </form>
  );
}
