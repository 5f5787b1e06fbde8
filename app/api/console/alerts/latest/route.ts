import { getDb } from "@/lib/db";
import { alertsToken } from "@/lib/console/alerts";
import { requireConsoleSession } from "@/lib/console/json-route";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

/** The alerts centre's change token: any alert changed, or a monitor pass finished. */
export const GET = withProblems(async () => {
  await requireConsoleSession("alerts:read");
  return json({ token: await alertsToken(getDb()) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
