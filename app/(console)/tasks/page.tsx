import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { withoutEmptyFields } from "@/lib/adapters/console/shared/clean-query";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadTaskList } from "@/lib/adapters/console/tasks/task-list";
import { parseTaskListParams } from "@/lib/adapters/console/tasks/task-list-query";
import { listWorkflowNames } from "@/lib/stores/workflow-registry";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { TaskListView } from "@/components/tasks/task-list-view";

export const metadata: Metadata = { title: "Tasks" };

export default async function TasksPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const query = await searchParams;
  // Filters live in the URL with the empty ones left out (a GET form sends every field).
  const clean = withoutEmptyFields("/tasks", query);
  if (clean) redirect(clean);
  // Who is asking comes first: the workflow names that check the filters are their tenant's.
  const access = await authorizePage("tasks:read", `/tasks${queryString(query)}`);
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const db = await consoleDb();
  const params = parseTaskListParams(query, await listWorkflowNames(db));
  return <TaskListView params={params} list={await loadTaskList(db, params)} />;
}

/** The query as it came, for the way back after signing in. */
function queryString(query: Record<string, string | string[] | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) search.append(key, v);
  const text = search.toString();
  return text ? `?${text}` : "";
}
