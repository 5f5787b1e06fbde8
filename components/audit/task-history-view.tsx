import Link from "next/link";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import type { AuditSearchParams } from "@/lib/adapters/console/audit/audit-query";
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
  role,
}: {
  task: TaskView;
  filters: AuditSearchParams;
  canVerify: boolean;
  canAnnotate: boolean;
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
    </>
  );
}
