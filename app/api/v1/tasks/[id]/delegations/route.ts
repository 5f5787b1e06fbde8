import { readApiJson } from "@/lib/adapters/api/context";
import { delegationResource } from "@/lib/adapters/api/delegation-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { listDelegations } from "@/lib/stores/task-delegations";
import { delegateTask } from "@/lib/use-cases/agents/delegate-task";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/** Who besides its owner may act on the task: every delegation, live and ended, oldest first. */
export const GET = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "tasks:read");
  const { id } = await params;
  const db = dbFor(principal);
  const task = await requireTaskReach(db, principal, id);
  return json({ owner: task.createdBy, items: (await listDelegations(db, id)).map(delegationResource) });
});

/** The owner lets another agent act on the task (`{"identity": "spiffe://…"}`): 201, or 200 when it already may. */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "tasks:transition");
  const { id } = await params;
  const { delegation, changed } = await delegateTask(dbFor(principal), principal, id, await readApiJson(request));
  return json(delegationResource(delegation), { status: changed ? 201 : 200 });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
