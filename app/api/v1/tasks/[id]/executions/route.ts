import { readApiJson, requireApiPrincipal, withWritePreconditions } from "@/lib/adapters/api/context";
import { executionResourcesFor, intentResultResourceFor } from "@/lib/adapters/api/execution-resources";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { listExecutions } from "@/lib/stores/execution-store";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { requireToolInScope } from "@/lib/model/agent-scopes";
import { ToolNameSchema } from "@/lib/model/tools/tool-name";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { etagOf } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/**
 * Record the intent to call a tool, before calling it: 201 `proceed` with
 * the idempotency key to send, or 200 `receipt` when this tool_call_id
 * already succeeded (do not call again). A retry of an intent that was never
 * sent answers `proceed` again with the same attempt (200, nothing written).
 * The version comes from If-Match or the body, the lease token from
 * Fencing-Token or the body. 202 `blocked`: the irreversible call was
 * frozen for review because of the task's instructions (instruction_id in
 * the body names the one it relies on); do not send it. With `"send": true`
 * the attempt answered `proceed` is already SENT (markSent's rules, in the
 * intent's transaction for a new attempt): no POST …/sent follows.
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const db = dbFor(principal);
  const body = withWritePreconditions(await readApiJson(request), request.headers);
  await requireTaskReach(db, principal, id, { drive: true });
  // A malformed tool name is recordIntent's 400 to word; any other, built in or registered, must be in the token's scopes.
  const tool = ToolNameSchema.safeParse((body as { tool?: unknown } | null)?.tool);
  if (tool.success) requireToolInScope(principal.scopes, tool.data);
  const result = await recordIntent(db, id, body, actorOf(principal));
  // The engine returns the task only when this request moved it; otherwise
  // the caller still needs the version its next write is based on.
  const written = result.kind !== "receipt" && result.task !== null;
  const answer = await intentResultResourceFor(
    db,
    principal,
    result,
    written ? result.task! : await getTaskOrThrow(db, id),
  );
  const headers: Record<string, string> = { ETag: etagOf(answer.task.version) };
  // An intent recorded before and sent now (`send`) wrote its SENT mark: not a replay.
  const sentNow = result.kind === "proceed" && result.execution.status === "SENT";
  if (!written && !sentNow) headers["Idempotent-Replayed"] = "true";
  // 202 for blocked: accepted, but for people to decide; nothing may be sent.
  const status = result.kind === "blocked" ? 202 : written ? 201 : 200;
  return json(answer, { status, headers });
});

/** The task's execution ledger: every tool call, oldest first. */
export const GET = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:read");
  const { id } = await params;
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id);
  const items = await listExecutions(db, id);
  return json({ items: await executionResourcesFor(db, principal, items) });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
