import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { actorOf, can } from "@/lib/model/permissions";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { maskRestorePlanForReader } from "@/lib/use-cases/data-classes/mask-for-reader";
import { planRestore } from "@/lib/use-cases/checkpoints/plan-restore";
import { isAppError } from "@/lib/core/errors";
import { idFromParam, loadCheckpointInspector } from "@/lib/adapters/console/checkpoints/checkpoints";
import { checkpointHref } from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { CheckpointInspectorView } from "@/components/checkpoints/checkpoint-inspector-view";

type Props = { params: Promise<{ id: string }> };

/** A plan the engine refuses to build (the task's workflow is unknown here) is left out; the page says the rest. */
function planUnavailable(error: unknown): null {
  if (isAppError(error)) return null;
  throw error;
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Checkpoint ${idFromParam((await params).id)}` };
}

export default async function CheckpointPage({ params }: Props) {
  const id = idFromParam((await params).id);
  const access = await authorizePage("checkpoints:read", checkpointHref(id));
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const db = await consoleDb();
  const data = await loadCheckpointInspector(db, id, access.principal);
  if (!data) notFound();
  // People who may not restore see what a restore would do, computed here (a dry run writes nothing);
  // engineers plan it themselves, with the rewind choice.
  const readOnlyPlan = can(access.principal, "checkpoints:restore")
    ? null
    : await planRestore(db, id, { rewind: false }, actorOf(access.principal))
        .then((plan) => maskRestorePlanForReader(access.principal, plan, plan.reauthorization.workflow.currentDigest))
        .catch(planUnavailable);
  return <CheckpointInspectorView data={data} principal={access.principal} readOnlyPlan={readOnlyPlan} />;
}
