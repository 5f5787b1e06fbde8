import {
  parseQuery,
  parseTransitionRequest,
  readApiJson,
  requireApiPrincipal,
  TransitionLogQuerySchema,
} from "@/lib/adapters/api/context";
import { taskResourceFor, transitionResourceFor } from "@/lib/adapters/api/task-resources";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { checkTaskReach, requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { getTaskOrThrow, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { etagOf } from "@/lib/adapters/http/preconditions";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/**
 * Transition a task (or update it in place when `to` is omitted) under
 * compare-and-swap: the expected version comes from If-Match or the body,
 * the lease's fencing token from Fencing-Token or the body.
 * A retried transition_id answers with the first result and
 * `Idempotent-Replayed: true`.
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const input = parseTransitionRequest(
    await readApiJson(request),
    request.headers.get("if-match"),
    request.headers.get("fencing-token"),
  );
  const db = dbFor(principal);
  // The reach is checked on the transition's own read of the task: one statement fewer per request.
  const result = await transitionTask(db, id, input, actorOf(principal), {
    reach: (task) => checkTaskReach(db, principal, task, { drive: true }),
  });
  const headers: Record<string, string> = { ETag: etagOf(result.task.version) };
  if (result.replayed) headers["Idempotent-Replayed"] = "true";
  return json(
    {
      task: taskResourceFor(principal, result.task),
      transition: transitionResourceFor(principal, result.transition, result.task.workflow.digest),
      replayed: result.replayed,
    },
    { headers },
  );
});

/** The transition log, oldest first, paged by `after_version`. */
export const GET = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:read");
  const { id } = await params;
  const query = parseQuery(TransitionLogQuerySchema, queryOf(request.url));
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id);
  // One more than asked tells whether another page exists without a count query.
  const rows = await listTransitions(db, id, { afterVersion: query.after_version, limit: query.limit + 1 });
  const items = rows.slice(0, query.limit);
  const last = items[items.length - 1];
  // A patch's classes are those of the task's workflow: the pinned digest says which.
  const { workflow } = await getTaskOrThrow(db, id);
  return json({
    items: items.map((t) => transitionResourceFor(principal, t, workflow.digest)),
    next_after_version: rows.length > query.limit && last ? last.toVersion : null,
  });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
