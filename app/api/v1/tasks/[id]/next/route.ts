import { requireApiPrincipal, workflowOfTaskOrThrow } from "@/lib/api/context";
import { nextStepsResource } from "@/lib/api/resources";
import { actorOf } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db";
import { getTaskOrThrow } from "@/lib/engine/tasks";
import { nextSteps } from "@/lib/engine/transition-rules";
import { etagOf } from "@/lib/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

/** The edges this caller may take from the task's status now, each with what blocks it. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiPrincipal(request, "tasks:read");
  const { id } = await params;
  const task = await getTaskOrThrow(getDb(), id);
  const def = workflowOfTaskOrThrow(task);
  const steps = nextSteps(def, task.state, actorOf(principal).kind);
  return json(nextStepsResource(task, def, steps), { headers: { ETag: etagOf(task.version) } });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
