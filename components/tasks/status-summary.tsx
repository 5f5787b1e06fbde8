import Link from "next/link";
import { getLatestKnownWorkflow } from "@/lib/model/workflows";
import { statusTone } from "@/lib/adapters/console/shared/status";
import { formatInteger } from "@/lib/adapters/console/shared/format";
import { taskListHref, type TaskListParams } from "@/lib/adapters/console/tasks/task-list-query";

export interface StatusCount {
  workflow: string;
  status: string;
  count: number;
}

/** Counts by status per workflow; each count is a link that filters the list to it. */
export function StatusSummary({ counts, params }: { counts: StatusCount[]; params: TaskListParams }) {
  const workflows = [...new Set(counts.map((c) => c.workflow))].sort();
  if (workflows.length === 0) return null;
  return (
    <section className="summary" aria-labelledby="summary-heading">
      <h2 id="summary-heading" className="visually-hidden">
        Tasks by status
      </h2>
      {workflows.map((workflow) => {
        const def = getLatestKnownWorkflow(workflow);
        const order = def ? Object.keys(def.states) : [];
        const rows = counts
          .filter((c) => c.workflow === workflow)
          .sort((a, b) => order.indexOf(a.status) - order.indexOf(b.status) || a.status.localeCompare(b.status));
        const total = rows.reduce((n, r) => n + r.count, 0);
        return (
          <div key={workflow} className="summary__row">
            <Link
              href={taskListHref({ workflow })}
              className="summary__workflow"
              aria-current={params.workflow === workflow && !params.status ? "true" : undefined}
            >
              <span className="summary__name">{workflow}</span>
              <span className="summary__total">{formatInteger(total)}</span>
            </Link>
            <ul className="summary__chips">
              {rows.map((r) => {
                const active = params.workflow === workflow && params.status === r.status;
                return (
                  <li key={r.status}>
                    <Link
                      href={taskListHref({ workflow, status: r.status })}
                      className={`chip chip--${statusTone(def, r.status)}`}
                      aria-current={active ? "true" : undefined}
                    >
                      {/* The name is what the chip shows, then what it counts (axe: label-content-name-mismatch). */}
                      <span className="chip__label">{r.status}</span>{" "}
                      <span className="chip__count">{formatInteger(r.count)}</span>
                      <span className="visually-hidden">
                        {" "}
                        {workflow} task{r.count === 1 ? "" : "s"}
                      </span>
                    </Link>
                  </li>
                );
              })}
            </ul>
          </div>
        );
      })}
    </section>
  );
}
