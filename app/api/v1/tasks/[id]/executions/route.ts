import { requireApiPrincipal } from "@/lib/adapters/api/context";
import { executionResourcesFor } from "@/lib/adapters/api/execution-resources";
import { intentAnswer, readToolCallRequest } from "@/lib/adapters/api/tool-call-requests";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { listExecutions } from "@/lib/stores/execution-store";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
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
  const { db, body } = await readToolCallRequest(request, principal, id);
  return intentAnswer(db, principal, id, await recordIntent(db, id, body, actorOf(principal)));
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
