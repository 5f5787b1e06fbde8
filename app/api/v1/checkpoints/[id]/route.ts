import { checkpointDetailResource } from "@/lib/api/checkpoint-resources";
import { requireApiOrSessionPrincipal } from "@/lib/api/session-or-bearer";
import { getDb } from "@/lib/db";
import { getCheckpointDetail } from "@/lib/engine/checkpoints";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

/** The checkpoint: its document (upgraded to v2), the integrity report, and its diff to the task now. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  await requireApiOrSessionPrincipal(request, "checkpoints:read");
  const { id } = await params;
  return json(checkpointDetailResource(await getCheckpointDetail(getDb(), id)));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
