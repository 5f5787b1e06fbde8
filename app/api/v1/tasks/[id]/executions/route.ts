import { readApiJson, requireApiPrincipal, withWritePreconditions } from "@/lib/api/context";
import { executionResource, taskResource } from "@/lib/api/resources";
import { actorOf } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db";
import { listExecutions, recordIntent } from "@/lib/engine/executions";
import { getTaskOrThrow, getTaskVersion } from "@/lib/engine/tasks";
import { AppError } from "@/lib/errors";
import { etagOf } from "@/lib/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/**
 * Record the intent to call a tool, before calling it: 201 `proceed` with
 * the idempotency key to send, or 200 `receipt` when this tool_call_id
 * already succeeded (do not call again). A retry of an intent that was never
 * sent answers `proceed` again with the same attempt (200, nothing written).
 * The version comes from If-Match or the body, the lease token from
 * Fencing-Token or the body.
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const db = getDb();
  const body = withWritePreconditions(await readApiJson(request), request.headers);
  const result = await recordIntent(db, id, body, actorOf(principal));
  // The engine returns the task only when this request moved it; otherwise
  // the caller still needs the version its next write is based on.
  const written = result.kind === "proceed" && result.task !== null;
  const task = result.kind === "proceed" && result.task ? result.task : await getTaskOrThrow(db, id);
  const headers: Record<string, string> = { ETag: etagOf(task.version) };
  if (!written) headers["Idempotent-Replayed"] = "true";
  return json({ kind: result.kind, execution: executionResource(result.execution), task: taskResource(task) }, { status: written ? 201 : 200, headers });
});

/** The task's execution ledger: every tool call, oldest first. */
export const GET = withProblems(async (request, { params }: Context) => {
  await requireApiPrincipal(request, "tasks:read");
  const { id } = await params;
  const db = getDb();
  if ((await getTaskVersion(db, id)) === null) throw new AppError("not_found", `Task ${id} does not exist.`);
  const items = await listExecutions(db, id);
  return json({ items: items.map(executionResource) });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
