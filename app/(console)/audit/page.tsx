import type { Metadata } from "next";
import { can } from "@/lib/auth/permissions";
import { authorizePage } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { describeAuditEntry } from "@/lib/console/audit-format";
import { auditSearchHref, parseAuditSearchParams, rawParams } from "@/lib/console/audit-query";
import { searchAuditEntries } from "@/lib/engine/audit-search";
import { isAppError } from "@/lib/errors";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { AuditSearchView, type AuditSearchResult } from "@/components/audit/audit-search-view";

export const metadata: Metadata = { title: "Audit log" };

const pageSize = 50;

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = rawParams(await searchParams);
  const access = await authorizePage("audit:read", auditSearchHref(params));
  if (!access.ok) return <ForbiddenNotice reason={`${access.reason} The audit log is for auditors, engineers and admins; a task's own history is on its page (History).`} />;
  const parsed = parseAuditSearchParams(params);
  let errors: string[] = parsed.ok ? [] : parsed.errors;
  let result: AuditSearchResult | null = null;
  if (parsed.ok) {
    try {
      const page = await searchAuditEntries(getDb(), parsed.query, { cursor: parsed.cursor, order: parsed.order, limit: pageSize });
      result = { rows: page.items.map(describeAuditEntry), nextCursor: page.nextCursor, matchedExecutions: page.matchedExecutions };
    } catch (error) {
      // A hand-edited cursor: said in words, like every other bad filter.
      if (!isAppError(error) || error.code !== "validation_failed") throw error;
      errors = ["Page: not a page of this search; start from the first page"];
    }
  }
  return <AuditSearchView params={params} errors={errors} result={result} canExport={can(access.principal, "audit:export")} role={access.principal.role} />;
}
