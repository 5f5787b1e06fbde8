import { getDb } from "@/lib/db";
import { describeAuditEntry } from "@/lib/console/audit-format";
import { parseTaskHistoryParams } from "@/lib/console/audit-query";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";
import { countAuditEntries, listTaskHistory, taskHistorySearch } from "@/lib/engine/audit-search";
import { isAppError } from "@/lib/errors";

/**
 * One page of a task's merged history, as readable rows, for the history
 * page's infinite scroll. tasks:read, not audit:read: whoever may open the
 * task may read what happened to it (operators work from it); the chain's
 * verification and the raw entries stay with audit:read.
 */
export async function GET(request: Request, context: { params: Promise<{ id: string }> }): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("tasks:read");
  if (principal instanceof Response) return principal;
  const { id } = await context.params;
  const parsed = parseTaskHistoryParams(Object.fromEntries(new URL(request.url).searchParams));
  if (!parsed.ok) return Response.json({ error: parsed.errors.join(" ") , errors: parsed.errors }, { status: 400, headers: noStore });
  const db = getDb();
  if ((await db.task.count({ where: { id } })) === 0) return Response.json({ error: `Task ${id} does not exist.` }, { status: 404, headers: noStore });
  try {
    const [page, total] = await Promise.all([
      listTaskHistory(db, id, parsed.query),
      // The count rides on the first page only: later pages keep the scroll cheap.
      parsed.query.cursor ? Promise.resolve(null) : countAuditEntries(db, taskHistorySearch(id, parsed.query)),
    ]);
    return Response.json({ items: page.items.map(describeAuditEntry), next_cursor: page.nextCursor, total }, { headers: noStore });
  } catch (error) {
    if (isAppError(error) && error.code === "validation_failed") return Response.json({ error: error.message, errors: [error.message] }, { status: 400, headers: noStore });
    throw error;
  }
}
