import { readApiJson, requireApiPrincipal, withFencingToken } from "@/lib/adapters/api/context";
import { outcomeResultResourceFor } from "@/lib/adapters/api/execution-resources";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { requireOutcomeAuthority } from "@/lib/use-cases/authority/require-outcome-authority";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { etagOf } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * What the tool call did: succeeded (with evidence naming this execution),
 * failed (the provider said nothing happened) or unknown (a timeout, a lost
 * answer). The task moves with it in the same transaction. A retried report
 * of the same outcome answers again and writes nothing.
 *
 * A stale fencing token is a 200, not a 409: the outcome *was* recorded (a
 * 4xx here means nothing was written), only the task's move was skipped, and
 * `lease_conflict` says so. A client that retries or gives up on a 409 would
 * otherwise misread a recorded fact as a refused one.
 */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const db = dbFor(principal);
  const body = withFencingToken(await readApiJson(request), request.headers.get("fencing-token"));
  // Only the intent's creator or the task's current lease holder (lib/model/task-authority.ts).
  await requireOutcomeAuthority(db, principal, id);
  const result = await recordOutcome(db, id, body, actorOf(principal));
  // No task from the engine: a retried report, the task had moved on (an
  // operator cancelled it) or its lease was taken over; the caller gets the task as it is.
  const task = result.task ?? (await getTaskOrThrow(db, result.execution.taskId));
  return json(await outcomeResultResourceFor(db, principal, result, task), { headers: { ETag: etagOf(task.version) } });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
