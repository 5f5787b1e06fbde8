import { dbFor } from "@/lib/db/client";
import { alertsToken } from "@/lib/adapters/console/alerts/alerts";
import { requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** The alerts centre's change token: any alert changed, or a monitor pass finished. */
export const GET = withProblems(async () => {
  const principal = await requireConsoleSession("alerts:read");
  return json({ token: await alertsToken(dbFor(principal)) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
