import Link from "next/link";
import { plainOptions, SelectFilter } from "@/components/select-filter";
import { auditActions } from "@/lib/model/audit/audit-chain";
import { workflowDefinitions } from "@/lib/model/workflows";
import { auditEventKinds, auditEventKindLabels } from "@/lib/use-cases/audit/audit-search";
import { executionMoves } from "@/lib/model/executions/execution-rules";
import { hasAuditFilters, toLocalInput, type AuditSearchParams } from "@/lib/adapters/console/audit/audit-query";

const statusNames = [
  ...new Set([...workflowDefinitions.flatMap((d) => Object.keys(d.states)), ...Object.keys(executionMoves)]),
];

/** The search's filters as a plain GET form: the URL is the search (bookmark, share, reload), no JavaScript needed. */
export function AuditSearchFilters({ params, tools }: { params: AuditSearchParams; tools: readonly string[] }) {
  return (
    <form
      method="get"
      action="/audit"
      className="filters audit-filters"
      role="search"
      aria-label="Search the audit log"
    >
      <div className="field">
        <label htmlFor="audit-from">From (UTC)</label>
        <input id="audit-from" name="from" type="datetime-local" step="1" defaultValue={toLocalInput(params.from)} />
      </div>
      <div className="field">
        <label htmlFor="audit-to">To (UTC, exclusive)</label>
        <input id="audit-to" name="to" type="datetime-local" step="1" defaultValue={toLocalInput(params.to)} />
      </div>
      <div className="field field--grow">
        <label htmlFor="audit-actor">Actor (id, short form or part)</label>
        <input
          id="audit-actor"
          name="actor"
          type="text"
          defaultValue={params.actor ?? ""}
          placeholder="spiffe://verity.local/user/operator"
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <div className="field field--grow">
        <label htmlFor="audit-task">Task id</label>
        <input
          id="audit-task"
          name="task"
          type="text"
          defaultValue={params.task ?? ""}
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <SelectFilter
        id="audit-kind"
        name="kind"
        label="Kind of event"
        anyLabel="Any kind"
        options={auditEventKinds.map((k) => ({ value: k, label: auditEventKindLabels[k] }))}
        value={params.kind}
      />
      <SelectFilter
        id="audit-action"
        name="action"
        label="Action"
        anyLabel="Any action"
        options={plainOptions(auditActions)}
        value={params.action}
      />
      <div className="field">
        <label htmlFor="audit-status">Status (to or from)</label>
        <input
          id="audit-status"
          name="status"
          type="text"
          list="audit-status-names"
          defaultValue={params.status ?? ""}
          autoComplete="off"
          spellCheck={false}
        />
        <datalist id="audit-status-names">
          {statusNames.map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
      </div>
      <SelectFilter
        id="audit-tool"
        name="tool"
        label="Tool"
        anyLabel="Any tool"
        options={plainOptions(tools)}
        value={params.tool}
      />
      <div className="field field--grow">
        <label htmlFor="audit-key">Idempotency key</label>
        <input
          id="audit-key"
          name="idempotency_key"
          type="text"
          defaultValue={params.idempotency_key ?? ""}
          placeholder="vrt:task_…:refund-1"
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <div className="field field--grow">
        <label htmlFor="audit-execution">Execution id</label>
        <input
          id="audit-execution"
          name="execution"
          type="text"
          defaultValue={params.execution ?? ""}
          placeholder="exec_…"
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <div className="field">
        <label htmlFor="audit-scope">Tool, key or execution: show</label>
        <select id="audit-scope" name="scope" defaultValue={params.scope ?? "execution"}>
          <option value="execution">Entries about the execution</option>
          <option value="task">Everything of its task</option>
        </select>
      </div>
      <div className="field">
        <label htmlFor="audit-order">Order</label>
        <select id="audit-order" name="order" defaultValue={params.order ?? "desc"}>
          <option value="desc">Newest first</option>
          <option value="asc">Oldest first</option>
        </select>
      </div>
      <div className="filters__actions">
        <button type="submit" className="button button--primary">
          Search
        </button>
        {hasAuditFilters(params) ? (
          <Link href="/audit" className="button button--ghost">
            Clear
          </Link>
        ) : null}
      </div>
    </form>
  );
}
