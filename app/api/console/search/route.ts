import { dbFor } from "@/lib/db/client";
import { loadSearch } from "@/lib/adapters/console/search/search";
import { requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/**
 * The header's search box as you type (session, tasks:read): grouped hits in
 * the person's tenant, customers only for data:restricted (docs/search.md).
 * A query under 2 characters is a 422 naming `q`.
 */
export const GET = withProblems(async (request) => {
  const principal = await requireConsoleSession("tasks:read");
  const url = new URL(request.url);
  return json(
    await loadSearch(dbFor(principal), principal, {
      q: url.searchParams.get("q") ?? "",
      limit: url.searchParams.get("limit") ?? undefined,
    }),
  );
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
