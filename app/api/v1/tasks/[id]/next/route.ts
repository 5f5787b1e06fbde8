import { requireApiPrincipal, workflowOfTaskOrThrow } from "@/lib/adapters/api/context";
import { nextStepsResource } from "@/lib/adapters/api/task-resources";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { nextSteps } from "@/lib/model/tasks/transition-rules";
import { etagOf } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** The edges this caller may take from the task's status now, each with what blocks it. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiPrincipal(request, "tasks:read");
  const { id } = await params;
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id);
  const task = await getTaskOrThrow(db, id);
  const def = workflowOfTaskOrThrow(task);
  const steps = nextSteps(def, task.state, actorOf(principal).kind);
  return json(nextStepsResource(task, def, steps), { headers: { ETag: etagOf(task.version) } });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
