import { checkpointRestoreResource } from "@/lib/adapters/api/checkpoint-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { getDb } from "@/lib/db/client";
import { listRestores } from "@/lib/use-cases/checkpoints/list-restores";
import { getTaskVersion } from "@/lib/use-cases/tasks/task-queries";
import { AppError } from "@/lib/core/errors";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Every restore attempt on the task, applied or refused, newest first, each with the plan it was shown. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  await requireApiOrSessionPrincipal(request, "checkpoints:read");
  const { id } = await params;
  const db = getDb();
  if ((await getTaskVersion(db, id)) === null) throw new AppError("not_found", `Task ${id} does not exist.`);
  const items = await listRestores(db, id);
  return json({ items: items.map(checkpointRestoreResource) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
