import { dbFor } from "@/lib/db/client";
import { inboxSummary } from "@/lib/adapters/console/inbox/inbox";
import { requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** The inbox's total (the navigation badge) and its change token (the page's live refresh). */
export const GET = withProblems(async () => {
  const principal = await requireConsoleSession("inbox:read");
  return json(await inboxSummary(dbFor(principal), principal));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
