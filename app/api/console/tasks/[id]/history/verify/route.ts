import { dbFor } from "@/lib/db/client";
import { verificationAnswer } from "@/lib/adapters/console/audit/audit-format";
import { requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { verifyAuditStreams } from "@/lib/stores/audit-log";
import { taskAuditStreams } from "@/lib/use-cases/audit/audit-search";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** The verified badge of a task's history: the task's chains walked now (audit:read). */
export const GET = withProblems(async (_request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireConsoleSession("audit:read");
  const { id } = await params;
  const db = dbFor(principal);
  return json(verificationAnswer(await verifyAuditStreams(db, await taskAuditStreams(db, id))));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
