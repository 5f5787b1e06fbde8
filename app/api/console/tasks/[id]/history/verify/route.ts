import { getDb } from "@/lib/db";
import { describeVerification } from "@/lib/console/audit-format";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";
import { verifyAuditStreams } from "@/lib/engine/audit-log";
import { taskAuditStreams } from "@/lib/engine/audit-search";

/** The verified badge of a task's history: the task's chains walked now (audit:read). */
export async function GET(_request: Request, context: { params: Promise<{ id: string }> }): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("audit:read");
  if (principal instanceof Response) return principal;
  const { id } = await context.params;
  const db = getDb();
  const verification = await verifyAuditStreams(db, await taskAuditStreams(db, id));
  const words = describeVerification(verification);
  return Response.json(
    {
      ok: verification.ok,
      headline: words.headline,
      detail: words.detail,
      streams: verification.streams,
      entries: verification.entries,
      checked_at: verification.checkedAt.toISOString(),
      first_break: verification.firstBreak,
    },
    { headers: noStore },
  );
}
