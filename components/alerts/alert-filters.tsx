import Link from "next/link";
import { kindOptions, severityOptions, statusOptions, type AlertFilters as Filters } from "@/lib/console/alerts";

/** A plain GET form: the filters are the URL (/alerts?status=OPEN&kind=stale_write), and work without JavaScript. */
export function AlertFilters({ filters }: { filters: Filters }) {
  const any = filters.status || filters.severity || filters.kind || filters.task;
  return (
    <form method="get" action="/alerts" className="filters" role="search" aria-label="Filter alerts">
      <div className="field">
        <label htmlFor="alert-status">Status</label>
        <select id="alert-status" name="status" defaultValue={filters.status ?? ""}>
          <option value="">Any status</option>
          {statusOptions.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="alert-severity">Severity</label>
        <select id="alert-severity" name="severity" defaultValue={filters.severity ?? ""}>
          <option value="">Any severity</option>
          {severityOptions.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="alert-kind">Kind</label>
        <select id="alert-kind" name="kind" defaultValue={filters.kind ?? ""}>
          <option value="">Any kind</option>
          {kindOptions.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field field--grow">
        <label htmlFor="alert-task">Task id</label>
        <input id="alert-task" name="task" type="search" defaultValue={filters.task ?? ""} placeholder="task_01k…" autoComplete="off" spellCheck={false} />
      </div>
      <div className="filters__actions">
        <button type="submit" className="button button--primary">
          Apply
        </button>
        {any ? (
          <Link href="/alerts" className="button button--ghost">
            Clear
          </Link>
        ) : null}
      </div>
    </form>
  );
}
