import { listExportHref, type ExportableList } from "@/lib/adapters/console/exports/list-export-route";

/**
 * A list's downloads: every row its current filters select (not just this
 * page), as CSV or JSON Lines, from the list's export route; the server
 * checks the person, their tenant and their clearance (docs/search.md).
 */
export function ExportLinks({
  list,
  filters,
  what,
}: {
  list: ExportableList;
  /** The page's filters, as its URL has them (empty ones are left out). */
  filters: Record<string, string | undefined>;
  /** "tasks", "executions": the words of the group's label. */
  what: string;
}) {
  return (
    <div className="export-links" role="group" aria-label={`Download these ${what}`} data-testid={`export-${list}`}>
      <a className="button button--small" href={listExportHref(list, filters, "csv")} download>
        Download CSV
      </a>
      <a className="button button--small" href={listExportHref(list, filters, "jsonl")} download>
        Download JSON Lines
      </a>
    </div>
  );
}
