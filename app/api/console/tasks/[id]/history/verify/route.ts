import { getDb } from "@/lib/db";
import { verificationAnswer } from "@/lib/console/audit-format";
import { requireConsoleSession } from "@/lib/console/json-route";
import { verifyAuditStreams } from "@/lib/engine/audit-log";
import { taskAuditStreams } from "@/lib/engine/audit-search";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

/** The verified badge of a task's history: the task's chains walked now (audit:read). */
export const GET = withProblems(async (_request, { params }: { params: Promise<{ id: string }> }) => {
  await requireConsoleSession("audit:read");
  const { id } = await params;
  const db = getDb();
  return json(verificationAnswer(await verifyAuditStreams(db, await taskAuditStreams(db, id))));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
