import { readApiJson } from "@/lib/adapters/api/context";
import { restoreResultResource } from "@/lib/adapters/api/checkpoint-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { requireCheckpointReach } from "@/lib/use-cases/authority/require-checkpoint-reach";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { etagOf, parseIfMatch, withExpectedVersion } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * Restore: engineers only. The task version you planned at as If-Match or
 * expected_version (409 when the task moved since), a reason, and
 * `rewind: true` to restore a checkpoint older than the committed state.
 * Applied: a new transition (version n+1). Refused: 422 with the refusal
 * code as the invariant. Both are recorded; a retried restore_id replays.
 */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "checkpoints:restore");
  const { id } = await params;
  const body = withExpectedVersion(await readApiJson(request), parseIfMatch(request.headers.get("if-match")));
  const db = dbFor(principal);
  await requireCheckpointReach(db, principal, id, { drive: true });
  const result = await restoreCheckpoint(db, id, body, actorOf(principal));
  const headers: Record<string, string> = { ETag: etagOf(result.task.version) };
  if (result.replayed) headers["Idempotent-Replayed"] = "true";
  return json(restoreResultResource(result), { headers });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
