import { requireApiPrincipal, readApiJson } from "@/lib/adapters/api/context";
import { taskResource } from "@/lib/adapters/api/task-resources";
import { actorOf } from "@/lib/model/permissions";
import { getDb } from "@/lib/db/client";
import { listTasks } from "@/lib/use-cases/tasks/list-tasks";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { etagOf } from "@/lib/adapters/http/preconditions";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Create a task. 201 when new; 200 when the same task_id was already created with the same body. */
export const POST = withProblems(async (request) => {
  const principal = await requireApiPrincipal(request, "tasks:create");
  const body = await readApiJson(request);
  const { task, created } = await createTask(getDb(), body, actorOf(principal));
  const headers: Record<string, string> = {
    ETag: etagOf(task.version),
    Location: `/api/v1/tasks/${encodeURIComponent(task.id)}`,
  };
  if (!created) headers["Idempotent-Replayed"] = "true";
  return json(taskResource(task), { status: created ? 201 : 200, headers });
});

/** Newest activity first, keyset-paged: pass `next_cursor` back as `cursor`. */
export const GET = withProblems(async (request) => {
  await requireApiPrincipal(request, "tasks:read");
  const page = await listTasks(getDb(), queryOf(request.url));
  return json({ items: page.items.map(taskResource), next_cursor: page.nextCursor });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
