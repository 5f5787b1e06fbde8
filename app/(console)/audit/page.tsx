import type { Metadata } from "next";
import { can } from "@/lib/model/permissions";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { describeAuditEntry } from "@/lib/adapters/console/audit/audit-format";
import { auditSearchHref, parseAuditSearchParams, rawParams } from "@/lib/adapters/console/audit/audit-query";
import { searchAuditEntries } from "@/lib/use-cases/audit/audit-search";
import { readableAuditEntries } from "@/lib/use-cases/audit/readable-audit-entries";
import { isAppError } from "@/lib/core/errors";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { AuditSearchView, type AuditSearchResult } from "@/components/audit/audit-search-view";
import { listKnownToolNames } from "@/lib/use-cases/tools/get-tool";

export const metadata: Metadata = { title: "Audit log" };

const pageSize = 50;

export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = rawParams(await searchParams);
  const access = await authorizePage("audit:read", auditSearchHref(params));
  if (!access.ok)
    return (
      <ForbiddenNotice
        reason={`${access.reason} The audit log is for auditors, engineers and admins; a task's own history is on its page (History).`}
      />
    );
  const parsed = parseAuditSearchParams(params);
  let errors: string[] = parsed.ok ? [] : parsed.errors;
  let result: AuditSearchResult | null = null;
  if (parsed.ok) {
    try {
      const db = await consoleDb();
      const page = await searchAuditEntries(db, parsed.query, {
        cursor: parsed.cursor,
        order: parsed.order,
        limit: pageSize,
      });
      result = {
        rows: (await readableAuditEntries(db, page.items)).map(describeAuditEntry),
        nextCursor: page.nextCursor,
        matchedExecutions: page.matchedExecutions,
      };
    } catch (error) {
      // A hand-edited cursor: said in words, like every other bad filter.
      if (!isAppError(error) || error.code !== "validation_failed") throw error;
      errors = ["Page: not a page of this search; start from the first page"];
    }
  }
  return (
    <AuditSearchView
      params={params}
      errors={errors}
      result={result}
      canExport={can(access.principal, "audit:export")}
      canAnnotate={can(access.principal, "audit:annotate")}
      role={access.principal.role}
      tenantId={access.principal.tenantId}
      tools={await listKnownToolNames(await consoleDb())}
    />
  );
}
