import { checkpointDetailResource } from "@/lib/adapters/api/checkpoint-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { requireCheckpointReach } from "@/lib/use-cases/authority/require-checkpoint-reach";
import { getCheckpointDetail } from "@/lib/use-cases/checkpoints/get-checkpoint-detail";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** The checkpoint: its document (upgraded to v2), the integrity report, and its diff to the task now. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "checkpoints:read");
  const { id } = await params;
  const db = dbFor(principal);
  await requireCheckpointReach(db, principal, id);
  return json(checkpointDetailResource(principal, await getCheckpointDetail(db, id)));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
