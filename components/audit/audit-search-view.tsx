import Link from "next/link";
import type { AuditRowView } from "@/lib/adapters/console/audit/audit-format";
import {
  auditExportHref,
  auditSearchHref,
  auditSearchFields,
  hasAuditFilters,
  utcInstant,
  type AuditSearchParams,
} from "@/lib/adapters/console/audit/audit-query";
import { pluralize } from "@/lib/adapters/console/shared/format";
import { AuditRowContent } from "@/components/audit/audit-row";
import { shortIdentity } from "@/lib/adapters/console/shared/format";
import { AuditSearchFilters } from "@/components/audit/audit-search-filters";
import { AnnotationForm } from "@/components/audit/annotation-form";
import { VerifiedBadge } from "@/components/audit/verified-badge";
import "@/components/audit/audit.css";

export interface AuditSearchResult {
  rows: AuditRowView[];
  nextCursor: string | null;
  matchedExecutions: number | null;
}

/** The auditors' console: search across tasks, verify every chain, export what the filters select. */
export function AuditSearchView({
  params,
  errors,
  result,
  canExport,
  canAnnotate,
  role,
  tenantId,
  tools,
}: {
  params: AuditSearchParams;
  errors: string[];
  result: AuditSearchResult | null;
  canExport: boolean;
  /** audit:annotate: each entry offers a correction form. */
  canAnnotate: boolean;
  role: string;
  /** Whose log this is: the signed-in person's tenant, and only theirs. */
  tenantId: string;
  /** The tool filter's choices: the built-ins and every registered tool. */
  tools: readonly string[];
}) {
  return (
    <>
      <header className="page-header">
        <div className="page-header__row">
          <h1>Audit log</h1>
        </div>
        <p className="hint">
          Every state change, decision, reconciliation, restore, sign-in and denied permission, hash-chained as it was
          committed. Search across tasks, verify the chains, take an export a third party can check. Times are UTC. This
          is the log of tenant <code>{tenantId}</code>, and only of it.
        </p>
      </header>
      <AuditSearchFilters params={params} tools={tools} />
      <div className="audit-layout">
        <section className="card" aria-labelledby="audit-results-heading">
          <h2 id="audit-results-heading">Entries</h2>
          {errors.length > 0 ? (
            <div className="notice notice--error" role="alert">
              <p className="notice__title">The search cannot run with these filters</p>
              <ul>
                {errors.map((e) => (
                  <li key={e}>{e}</li>
                ))}
              </ul>
            </div>
          ) : result ? (
            <Results params={params} result={result} canAnnotate={canAnnotate} />
          ) : null}
        </section>
        <aside>
          <section className="card" aria-labelledby="audit-verify-heading">
            <h2 id="audit-verify-heading">Verify chain</h2>
            <VerifiedBadge url="/api/console/audit/verify" what={`the audit chain of tenant ${tenantId}`} onDemand />
          </section>
          <section className="card" aria-labelledby="audit-export-heading">
            <h2 id="audit-export-heading">Export</h2>
            {canExport ? (
              <ExportForm params={params} disabled={errors.length > 0} />
            ) : (
              <p className="notice notice--warning">
                Your role ({role}) cannot export the log: an export takes a copy out of the system, which needs the
                audit:export permission (auditors and admins). You can still search and verify.
              </p>
            )}
          </section>
        </aside>
      </div>
    </>
  );
}

function Results({
  params,
  result,
  canAnnotate,
}: {
  params: AuditSearchParams;
  result: AuditSearchResult;
  canAnnotate: boolean;
}) {
  const onFirstPage = !params.cursor;
  if (result.rows.length === 0) {
    return (
      <p className="audit-history__status" role="status">
        {result.matchedExecutions === 0
          ? "No execution matches the tool, idempotency key or execution id given, so no entry does."
          : hasAuditFilters(params)
            ? "No entry matches these filters."
            : "The log is empty."}
      </p>
    );
  }
  return (
    <>
      <p className="audit-history__status" role="status">
        {pluralize(result.rows.length, "entry", "entries")} on this page{onFirstPage ? "" : " (not the first)"} ·{" "}
        {params.order === "asc" ? "oldest first" : "newest first"}
        {result.matchedExecutions !== null ? ` · ${pluralize(result.matchedExecutions, "matching execution")}` : ""}
      </p>
      <ol className="audit-results">
        {result.rows.map((row) => (
          <li key={row.id} className="audit-row" data-entry-id={row.id}>
            <AuditRowContent
              row={row}
              showTask
              actorHref={(actor) => `/audit?${new URLSearchParams({ actor: shortIdentity(actor) })}`}
            />
            {canAnnotate ? (
              <details className="audit-annotate">
                <summary>Annotate</summary>
                <AnnotationForm entryId={row.id} />
              </details>
            ) : null}
          </li>
        ))}
      </ol>
      <nav className="pagination" aria-label="Pages">
        <ul>
          <li>
            {onFirstPage ? (
              <span className="button button--ghost" aria-disabled="true">
                ← First page
              </span>
            ) : (
              <Link className="button" href={auditSearchHref({ ...params, cursor: undefined })}>
                ← First page
              </Link>
            )}
          </li>
          <li>
            {result.nextCursor ? (
              <Link className="button" href={auditSearchHref({ ...params, cursor: result.nextCursor })} rel="next">
                Next page →
              </Link>
            ) : (
              <span className="button button--ghost" aria-disabled="true">
                No more entries
              </span>
            )}
          </li>
        </ul>
      </nav>
    </>
  );
}

/**
 * A POST form to the export route: the current filters as hidden fields, the
 * format as the button pressed. POST because an export is recorded, and a
 * session GET is refused (app/api/v1/audit/export/route.ts).
 */
function ExportForm({ params, disabled }: { params: AuditSearchParams; disabled: boolean }) {
  const hidden = auditSearchFields.filter((k) => k !== "cursor" && k !== "order" && params[k]);
  return (
    <form method="post" action="/api/v1/audit/export" className="audit-export">
      <p>
        {hasAuditFilters(params) ? "Every entry these filters select" : "The whole log"}, oldest first, with seq,
        prev_hash and hash on every line: verify it with <span className="mono">POST /api/v1/audit/verify</span> or{" "}
        <span className="mono">npm run audit:verify -- --export &lt;file&gt;</span>. The export is itself recorded.
      </p>
      {hidden.map((k) => (
        <input key={k} type="hidden" name={k} value={k === "from" || k === "to" ? utcInstant(params[k]!) : params[k]} />
      ))}
      <div className="button-row">
        <button type="submit" name="format" value="csv" className="button" disabled={disabled}>
          Download CSV
        </button>
        <button type="submit" name="format" value="jsonl" className="button" disabled={disabled}>
          Download JSON Lines
        </button>
      </div>
      <p className="hint">
        For scripts, with an API token (<span className="mono">Authorization: Bearer …</span>):{" "}
        <span className="mono">GET {auditExportHref(params, "jsonl")}</span>
      </p>
    </form>
  );
}
