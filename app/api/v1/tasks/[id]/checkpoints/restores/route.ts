import { checkpointRestoreResource } from "@/lib/adapters/api/checkpoint-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { listRestores } from "@/lib/use-cases/checkpoints/list-restores";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Every restore attempt on the task, applied or refused, newest first, each with the plan it was shown. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "checkpoints:read");
  const { id } = await params;
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id);
  const items = await listRestores(db, id);
  return json({ items: items.map(checkpointRestoreResource) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
