import { requireApiPrincipal, readApiJson } from "@/lib/adapters/api/context";
import { taskResourceFor } from "@/lib/adapters/api/task-resources";
import { dbFor } from "@/lib/db/client";
import { listReachableTasks } from "@/lib/use-cases/authority/list-reachable-tasks";
import { createTaskInScope } from "@/lib/use-cases/authority/create-task-in-scope";
import { etagOf } from "@/lib/adapters/http/preconditions";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Create a task. 201 when new; 200 when the same task_id was already created with the same body. */
export const POST = withProblems(async (request) => {
  const principal = await requireApiPrincipal(request, "tasks:create");
  const body = await readApiJson(request);
  const { task, created } = await createTaskInScope(dbFor(principal), body, principal);
  const headers: Record<string, string> = {
    ETag: etagOf(task.version),
    Location: `/api/v1/tasks/${encodeURIComponent(task.id)}`,
  };
  if (!created) headers["Idempotent-Replayed"] = "true";
  return json(taskResourceFor(principal, task), { status: created ? 201 : 200, headers });
});

/** Newest activity first, keyset-paged: pass `next_cursor` back as `cursor`. An agent sees its own and its delegated tasks. */
export const GET = withProblems(async (request) => {
  const principal = await requireApiPrincipal(request, "tasks:read");
  const page = await listReachableTasks(dbFor(principal), principal, queryOf(request.url));
  return json({ items: page.items.map((task) => taskResourceFor(principal, task)), next_cursor: page.nextCursor });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
