import { getDb } from "@/lib/db";
import { verificationAnswer } from "@/lib/console/audit-format";
import { requireConsoleSession } from "@/lib/console/json-route";
import { verifyAuditChains } from "@/lib/engine/audit-log";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

/** The /audit page's "Verify chain": every chain walked now, the answer in words (audit:read). */
export const GET = withProblems(async () => {
  await requireConsoleSession("audit:read");
  return json(verificationAnswer(await verifyAuditChains(getDb())));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
