import { readOptionalApiJson } from "@/lib/adapters/api/context";
import { checkpointSummaryResource } from "@/lib/adapters/api/checkpoint-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { listCheckpoints } from "@/lib/use-cases/checkpoints/list-checkpoints";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { parseIfMatch, withExpectedVersion } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/** The task's checkpoints, oldest first, each with its integrity report. */
export const GET = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "checkpoints:read");
  const { id } = await params;
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id);
  const items = await listCheckpoints(db, id);
  return json({ items: items.map(checkpointSummaryResource) });
});

/**
 * A checkpoint of the task's current committed state. If-Match (or
 * expected_version) pins which version you mean; a retried checkpoint_id
 * returns the first checkpoint (200, Idempotent-Replayed).
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "checkpoints:create");
  const { id } = await params;
  const body = withExpectedVersion(await readOptionalApiJson(request), parseIfMatch(request.headers.get("if-match")));
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id, { drive: true });
  const { checkpoint, created } = await createCheckpoint(db, id, body, actorOf(principal));
  const headers: Record<string, string> = { Location: `/api/v1/checkpoints/${encodeURIComponent(checkpoint.id)}` };
  if (!created) headers["Idempotent-Replayed"] = "true";
  return json(checkpointSummaryResource(checkpoint), { status: created ? 201 : 200, headers });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
