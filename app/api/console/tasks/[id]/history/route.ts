import { dbFor } from "@/lib/db/client";
import { describeAuditEntry } from "@/lib/adapters/console/audit/audit-format";
import { parseTaskHistoryParams } from "@/lib/adapters/console/audit/audit-query";
import { notFound, requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { countAuditEntries, listTaskHistory, taskHistorySearch } from "@/lib/use-cases/audit/audit-search";
import { readableAuditEntries } from "@/lib/use-cases/audit/readable-audit-entries";
import { getTaskVersion } from "@/lib/use-cases/tasks/task-queries";
import { validationError } from "@/lib/adapters/http/problem";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/**
 * One page of a task's merged history, as readable rows, for the history
 * page's infinite scroll. tasks:read, not audit:read: whoever may open the
 * task may read what happened to it (operators work from it); the chain's
 * verification and the raw entries stay with audit:read. Bad filters are a
 * 400 naming each query parameter, in the words the page shows.
 */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireConsoleSession("tasks:read");
  const { id } = await params;
  const parsed = parseTaskHistoryParams(Object.fromEntries(new URL(request.url).searchParams));
  if (!parsed.ok) throw validationError(parsed.errors);
  const db = dbFor(principal);
  if ((await getTaskVersion(db, id)) === null) throw notFound("Task", id);
  const [page, total] = await Promise.all([
    listTaskHistory(db, id, parsed.query),
    // The count rides on the first page only: later pages keep the scroll cheap.
    parsed.query.cursor ? Promise.resolve(null) : countAuditEntries(db, taskHistorySearch(id, parsed.query)),
  ]);
  const items = (await readableAuditEntries(db, page.items)).map(describeAuditEntry);
  return json({ items, next_cursor: page.nextCursor, total });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
