import { readOptionalApiJson } from "@/lib/adapters/api/context";
import { restorePlanResource } from "@/lib/adapters/api/checkpoint-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { requireCheckpointReach } from "@/lib/use-cases/authority/require-checkpoint-reach";
import { planRestore } from "@/lib/use-cases/checkpoints/plan-restore";
import { maskRestorePlanForReader } from "@/lib/use-cases/data-classes/mask-for-reader";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * The dry run of a restore: allowed or refused (with the reason), effects
 * by how resuming treats them, what is re-authorized, the lease it would
 * fence, and the resulting state with its diff. Writes nothing, so anyone
 * who may read checkpoints may plan; only engineers may restore.
 */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "checkpoints:read");
  const { id } = await params;
  const db = dbFor(principal);
  await requireCheckpointReach(db, principal, id);
  const plan = await planRestore(db, id, await readOptionalApiJson(request), actorOf(principal));
  const seen = maskRestorePlanForReader(principal, plan, plan.reauthorization.workflow.currentDigest);
  return json(restorePlanResource(seen.value, seen.maskedFields));
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
