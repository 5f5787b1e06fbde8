import Link from "next/link";
import { SelectFilter } from "@/components/select-filter";
import {
  kindOptions,
  severityOptions,
  statusOptions,
  type AlertFilters as Filters,
} from "@/lib/adapters/console/alerts/alerts";

/** A plain GET form: the filters are the URL (/alerts?status=OPEN&kind=stale_write), and work without JavaScript. */
export function AlertFilters({ filters }: { filters: Filters }) {
  const any = filters.status || filters.severity || filters.kind || filters.task;
  return (
    <form method="get" action="/alerts" className="filters" role="search" aria-label="Filter alerts">
      <SelectFilter
        id="alert-status"
        name="status"
        label="Status"
        anyLabel="Any status"
        options={statusOptions}
        value={filters.status}
      />
      <SelectFilter
        id="alert-severity"
        name="severity"
        label="Severity"
        anyLabel="Any severity"
        options={severityOptions}
        value={filters.severity}
      />
      <SelectFilter
        id="alert-kind"
        name="kind"
        label="Kind"
        anyLabel="Any kind"
        options={kindOptions}
        value={filters.kind}
      />
      <div className="field field--grow">
        <label htmlFor="alert-task">Task id</label>
        <input
          id="alert-task"
          name="task"
          type="search"
          defaultValue={filters.task ?? ""}
          placeholder="task_01k…"
          autoComplete="off"
          spellCheck={false}
        />
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
