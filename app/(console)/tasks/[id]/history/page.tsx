import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { can } from "@/lib/model/permissions";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { getTask } from "@/lib/use-cases/tasks/task-queries";
import { idFromParam } from "@/lib/adapters/console/checkpoints/checkpoints";
import { taskHistoryHref } from "@/lib/adapters/console/audit/audit-format";
import { rawParams } from "@/lib/adapters/console/audit/audit-query";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { TaskHistoryView } from "@/components/audit/task-history-view";

type Props = { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `History of ${idFromParam((await params).id)}` };
}

/** Anyone who may read the task reads its history (tasks:read); verifying its chains needs audit:read. */
export default async function TaskHistoryPage({ params, searchParams }: Props) {
  const id = idFromParam((await params).id);
  const access = await authorizePage("tasks:read", taskHistoryHref(id));
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const task = await getTask(await consoleDb(), id, "readable");
  if (!task) notFound();
  const filters = rawParams(await searchParams, ["kind", "actor", "from", "to", "order"]);
  return (
    <TaskHistoryView
      task={task}
      filters={filters}
      canVerify={can(access.principal, "audit:read")}
      canAnnotate={can(access.principal, "audit:annotate")}
      canExport={can(access.principal, "audit:export")}
      role={access.principal.role}
    />
  );
}
