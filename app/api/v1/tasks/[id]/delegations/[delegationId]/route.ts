import { delegationResource } from "@/lib/adapters/api/delegation-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { undelegateTask } from "@/lib/use-cases/agents/undelegate-task";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** The owner ends a delegation; ending an ended one answers it as it is. */
export const DELETE = withProblems(
  async (request, { params }: { params: Promise<{ id: string; delegationId: string }> }) => {
    const principal = await requireApiOrSessionPrincipal(request, "tasks:transition");
    const { id, delegationId } = await params;
    return json(delegationResource(await undelegateTask(dbFor(principal), principal, id, delegationId)));
  },
);

export const { GET, POST, PUT, PATCH } = otherMethods(["DELETE"]);
