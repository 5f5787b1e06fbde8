import { getDb } from "@/lib/db";
import { describeVerification } from "@/lib/console/audit-format";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";
import { verifyAuditChains } from "@/lib/engine/audit-log";

/** The /audit page's "Verify chain": every chain walked now, the answer in words (audit:read). */
export async function GET(): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("audit:read");
  if (principal instanceof Response) return principal;
  const verification = await verifyAuditChains(getDb());
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
