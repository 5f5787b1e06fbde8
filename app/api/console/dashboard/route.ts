import { getDb } from "@/lib/db";
import { loadDashboard } from "@/lib/console/dashboard";
import { requireConsoleSession } from "@/lib/console/json-route";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

/** The dashboard's numbers, polled by the page for live updates (session, tasks:read). */
export const GET = withProblems(async () => {
  await requireConsoleSession("tasks:read");
  return json(await loadDashboard(getDb()));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
