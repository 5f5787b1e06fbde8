import type { Metadata } from "next";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadTaskList } from "@/lib/adapters/console/tasks/task-list";
import { parseTaskListParams, taskListHref } from "@/lib/adapters/console/tasks/task-list-query";
import { listWorkflowNames } from "@/lib/stores/workflow-registry";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { TaskListView } from "@/components/tasks/task-list-view";

export const metadata: Metadata = { title: "Tasks" };

export default async function TasksPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = parseTaskListParams(await searchParams, await listWorkflowNames(await consoleDb()));
  const access = await authorizePage("tasks:read", taskListHref(params));
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  return <TaskListView params={params} list={await loadTaskList(await consoleDb(), params)} />;
}
