import { dbFor } from "@/lib/db/client";
import { loadDashboard } from "@/lib/adapters/console/dashboard/dashboard";
import { requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** The dashboard's numbers, polled by the page for live updates (session, tasks:read). */
export const GET = withProblems(async () => {
  const principal = await requireConsoleSession("tasks:read");
  return json(await loadDashboard(dbFor(principal)));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
