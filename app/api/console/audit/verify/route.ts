import { dbFor } from "@/lib/db/client";
import { verificationAnswer } from "@/lib/adapters/console/audit/audit-format";
import { requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** The /audit page's "Verify chain": every chain of the caller's tenant walked now, the answer in words naming it (audit:read). */
export const GET = withProblems(async () => {
  const principal = await requireConsoleSession("audit:read");
  return json(verificationAnswer(await verifyAuditChains(dbFor(principal)), principal.tenantId));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
