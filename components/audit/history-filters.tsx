import Link from "next/link";
import { auditEventKinds, auditEventKindLabels } from "@/lib/use-cases/audit/audit-search";
import { toLocalInput, type AuditSearchParams } from "@/lib/adapters/console/audit/audit-query";

/**
 * The timeline's filters as a plain GET form: they land in the URL (a
 * filtered history can be bookmarked and reloaded) and work without
 * JavaScript. Times are UTC, as everywhere in the console.
 */
export function HistoryFilters({ action, params }: { action: string; params: AuditSearchParams }) {
  const kinds = new Set((params.kind ?? "").split(",").filter(Boolean));
  const filtered = Boolean(params.kind || params.actor || params.from || params.to || params.order === "asc");
  return (
    <form method="get" action={action} className="filters audit-filters" role="search" aria-label="Filter the history">
      <fieldset className="audit-filters__kinds">
        <legend>Kinds of event</legend>
        {auditEventKinds
          .filter((k) => k !== "access")
          .map((k) => (
            <label key={k} className="audit-check">
              <input type="checkbox" name="kind" value={k} defaultChecked={kinds.has(k)} /> {auditEventKindLabels[k]}
            </label>
          ))}
      </fieldset>
      <div className="field field--grow">
        <label htmlFor="history-actor">Actor (id, short form or part)</label>
        <input
          id="history-actor"
          name="actor"
          type="text"
          defaultValue={params.actor ?? ""}
          placeholder="spiffe://verity.local/agent/refund-bot"
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <div className="field">
        <label htmlFor="history-from">From (UTC)</label>
        <input id="history-from" name="from" type="datetime-local" step="1" defaultValue={toLocalInput(params.from)} />
      </div>
      <div className="field">
        <label htmlFor="history-to">To (UTC, exclusive)</label>
        <input id="history-to" name="to" type="datetime-local" step="1" defaultValue={toLocalInput(params.to)} />
      </div>
      <div className="field">
        <label htmlFor="history-order">Order</label>
        <select id="history-order" name="order" defaultValue={params.order ?? "desc"}>
          <option value="desc">Newest first</option>
          <option value="asc">Oldest first</option>
        </select>
      </div>
      <div className="filters__actions">
        <button type="submit" className="button button--primary">
          Apply
        </button>
        {filtered ? (
          <Link href={action} className="button button--ghost">
            Clear
          </Link>
        ) : null}
      </div>
    </form>
  );
}
