import { requireApiPrincipal } from "@/lib/adapters/api/context";
import { outcomeResultResourceFor } from "@/lib/adapters/api/execution-resources";
import { intentAnswer, readToolCallRequest } from "@/lib/adapters/api/tool-call-requests";
import { actorOf } from "@/lib/model/permissions";
import { getConnectors } from "@/lib/connectors/effects";
import { performToolCall } from "@/lib/use-cases/executions/perform-tool-call";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { etagOf } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/**
 * Verity makes the tool call for the agent, through the connector it holds
 * (the built-in tools): the intent sent with itself, the call under the
 * execution's idempotency key, the provider's answer recorded
 * (lib/use-cases/executions/perform-tool-call.ts). 201 `performed` with the
 * attempt's outcome (succeeded, failed, or unknown: the reconciler settles
 * it); 200 `receipt` when this tool_call_id already succeeded; 202 `blocked`
 * when the task's instructions froze it for people. Same body, scopes,
 * If-Match and Fencing-Token as recording an intent.
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const { db, body } = await readToolCallRequest(request, principal, id);
  const result = await performToolCall(db, id, body, actorOf(principal), getConnectors());
  if (result.kind !== "performed") return intentAnswer(db, principal, id, result);
  // No task: the outcome is recorded but the task was not moved (its lease was taken over meanwhile, or a person moved it).
  const task = result.task ?? (await getTaskOrThrow(db, id));
  const answer = await outcomeResultResourceFor(db, principal, result, task);
  return json(
    { kind: "performed", outcome: result.outcome, ...answer },
    { status: 201, headers: { ETag: etagOf(task.version) } },
  );
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
