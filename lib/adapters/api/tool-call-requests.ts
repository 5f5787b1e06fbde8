import { readApiJson, withWritePreconditions } from "@/lib/adapters/api/context";
import { intentResultResourceFor } from "@/lib/adapters/api/execution-resources";
import { etagOf } from "@/lib/adapters/http/preconditions";
import { json } from "@/lib/adapters/http/respond";
import { dbFor, type Db } from "@/lib/db/client";
import { requireToolInScope } from "@/lib/model/agent-scopes";
import type { Principal } from "@/lib/model/permissions";
import { ToolNameSchema } from "@/lib/model/tools/tool-name";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import type { IntentResult } from "@/lib/use-cases/executions/record-intent";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";

/**
 * An agent's tool call enters the API two ways, recording its intent
 * (POST …/executions) and having Verity make the call (POST …/tool-calls).
 * Both read the request and answer an intent that was not called the same
 * way, here, so the two cannot drift apart on who may call or what a retry
 * is told.
 */

/** The body with If-Match and Fencing-Token folded in, once the caller may drive the task and call the tool. */
export async function readToolCallRequest(
  request: Request,
  principal: Principal,
  taskId: string,
): Promise<{ db: Db; body: unknown }> {
  const db = dbFor(principal);
  const body = withWritePreconditions(await readApiJson(request), request.headers);
  await requireTaskReach(db, principal, taskId, { drive: true });
  // A malformed tool name is the use case's 400 to word; any other, built in or registered, must be in the token's scopes.
  const tool = ToolNameSchema.safeParse((body as { tool?: unknown } | null)?.tool);
  if (tool.success) requireToolInScope(principal.scopes, tool.data);
  return { db, body };
}

/**
 * The answer to an intent: 201 when this request wrote it, 200 with
 * Idempotent-Replayed for a receipt or a retry that wrote nothing, 202 for a
 * call frozen for people (accepted, but nothing may be sent). The ETag is
 * the task's version the caller's next write is based on.
 */
export async function intentAnswer(
  db: Db,
  principal: Principal,
  taskId: string,
  result: IntentResult,
): Promise<Response> {
  // The engine returns the task only when this request moved it.
  const written = result.kind !== "receipt" && result.task !== null;
  const answer = await intentResultResourceFor(
    db,
    principal,
    result,
    written ? result.task! : await getTaskOrThrow(db, taskId),
  );
  const headers: Record<string, string> = { ETag: etagOf(answer.task.version) };
  // An intent recorded before and sent now (`send`) wrote its SENT mark: not a replay.
  const sentNow = result.kind === "proceed" && result.execution.status === "SENT";
  if (!written && !sentNow) headers["Idempotent-Replayed"] = "true";
  const status = result.kind === "blocked" ? 202 : written ? 201 : 200;
  return json(answer, { status, headers });
}
