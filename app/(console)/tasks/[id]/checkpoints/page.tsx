import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { newId } from "@/lib/core/ids";
import { idFromParam, loadTaskCheckpoints } from "@/lib/adapters/console/checkpoints/checkpoints";
import { taskCheckpointsHref } from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { TaskCheckpointsView } from "@/components/checkpoints/task-checkpoints-view";

type Props = { params: Promise<{ id: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Checkpoints of ${idFromParam((await params).id)}` };
}

export default async function TaskCheckpointsPage({ params }: Props) {
  const id = idFromParam((await params).id);
  const access = await authorizePage("checkpoints:read", taskCheckpointsHref(id));
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const data = await loadTaskCheckpoints(await consoleDb(), id, access.principal);
  if (!data) notFound();
  // One id per rendered form: pressing "Take checkpoint" twice takes one checkpoint.
  return <TaskCheckpointsView data={data} principal={access.principal} checkpointId={newId("ckpt")} />;
}
