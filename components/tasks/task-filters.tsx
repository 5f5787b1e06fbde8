import Link from "next/link";
import { plainOptions, SelectFilter } from "@/components/select-filter";
import type { statusOptionsByWorkflow, TaskListParams } from "@/lib/adapters/console/tasks/task-list-query";

/** A plain GET form: filters land in the URL and work without JavaScript. */
export function TaskFilters({
  params,
  groups,
}: {
  params: TaskListParams;
  groups: ReturnType<typeof statusOptionsByWorkflow>;
}) {
  return (
    <form method="get" action="/tasks" className="filters" role="search" aria-label="Filter tasks">
      <SelectFilter
        id="filter-workflow"
        name="workflow"
        label="Workflow"
        anyLabel="All workflows"
        options={plainOptions(groups.map((g) => g.workflow))}
        value={params.workflow}
      />
      <div className="field">
        <label htmlFor="filter-status">Status</label>
        <select id="filter-status" name="status" defaultValue={params.status ?? ""}>
          <option value="">All statuses</option>
          {groups.map((g) => (
            <optgroup key={g.workflow} label={g.workflow}>
              {g.statuses.map((s) => (
                <option key={`${g.workflow}:${s}`} value={s}>
                  {s}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
      </div>
      <div className="field field--grow">
        <label htmlFor="filter-q">Task id starts with</label>
        <input
          id="filter-q"
          name="q"
          type="search"
          defaultValue={params.q ?? ""}
          placeholder="task_01k…"
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <div className="field">
        <label htmlFor="filter-actor">Last changed by</label>
        <input
          id="filter-actor"
          name="actor"
          type="search"
          defaultValue={params.actor ?? ""}
          placeholder="agent/refund-bot"
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      {params.order === "asc" ? <input type="hidden" name="order" value="asc" /> : null}
      <div className="filters__actions">
        <button type="submit" className="button button--primary">
          Apply
        </button>
        {params.status || params.workflow || params.q || params.actor ? (
          <Link href="/tasks" className="button button--ghost">
            Clear
          </Link>
        ) : null}
      </div>
    </form>
  );
}
