import type { Metadata } from "next";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadSearch, searchPageHref } from "@/lib/adapters/console/search/search";
import { isAppError } from "@/lib/core/errors";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { SearchResultsView } from "@/components/search/search-results-view";

export const metadata: Metadata = { title: "Search" };

export default async function SearchPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const raw = (await searchParams).q;
  const q = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? "";
  const access = await authorizePage("tasks:read", searchPageHref(q));
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  if (!q) return <SearchResultsView query="" result={null} error={null} />;
  const found = await loadSearch(await consoleDb(), access.principal, { q, limit: 25 }).then(
    (result) => ({ result, error: null }),
    (error: unknown) => {
      // A query too short (or too long) is said in words beside the box, not a crash.
      if (isAppError(error) && error.code === "validation_failed")
        return { result: null, error: error.message.replace(/^q: /, "") };
      throw error;
    },
  );
  return <SearchResultsView query={q} result={found.result} error={found.error} />;
}
