import { requireApiPrincipal } from "@/lib/adapters/api/context";
import { taskResourceFor } from "@/lib/adapters/api/task-resources";
import { dbFor } from "@/lib/db/client";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { etagOf, ifNoneMatchHits } from "@/lib/adapters/http/preconditions";
import { json, notModified, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** The task with `ETag: "<version>"`; 304 when If-None-Match already names that version. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiPrincipal(request, "tasks:read");
  const { id } = await params;
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id);
  const task = await getTaskOrThrow(db, id, "readable");
  const etag = etagOf(task.version);
  if (ifNoneMatchHits(request.headers.get("if-none-match"), task.version)) return notModified({ ETag: etag });
  return json(taskResourceFor(principal, task), { headers: { ETag: etag } });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
