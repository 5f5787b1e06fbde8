import { dbFor } from "@/lib/db/client";
import { listTasks } from "@/lib/use-cases/tasks/list-tasks";
import { requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/**
 * A token that changes whenever any task is created or changed: every write
 * moves `updated_at`, so the newest task's id and version identify the
 * current state of the list. One index read, cheap to poll.
 */
export const GET = withProblems(async () => {
  const principal = await requireConsoleSession("tasks:read");
  const { items } = await listTasks(dbFor(principal), { limit: 1 });
  const newest = items[0];
  return json({ token: newest ? `${newest.id}@${newest.version}` : "empty" });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
