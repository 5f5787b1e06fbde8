import type { Db } from "@/lib/db/client";
import type { Principal } from "@/lib/model/permissions";
import { shortIdentity } from "@/lib/adapters/console/shared/format";
import {
  globalSearch,
  searchKindLabels,
  type GlobalSearchQuery,
  type SearchHit,
  type SearchKind,
} from "@/lib/use-cases/search/global-search";

/**
 * The global search as the console draws it (the header's box and /search):
 * each hit with the page it opens and its words, groups with their labels.
 * Plain data, so the route can send it to the box as JSON.
 */
export interface SearchHitView {
  kind: SearchKind;
  value: string;
  /** The value as the console shows it (an actor's short form). */
  label: string;
  /** The line under it: status, workflow or tool, task. */
  detail: string;
  href: string;
  at: string | null;
}

export interface SearchGroupView {
  kind: SearchKind;
  label: string;
  hits: SearchHitView[];
  more: boolean;
}

export interface SearchView {
  query: string;
  groups: SearchGroupView[];
  notSearched: Array<{ kind: SearchKind; label: string; why: string }>;
  total: number;
}

export function searchHitHref(hit: SearchHit): string {
  switch (hit.kind) {
    case "task":
    case "intent":
      return `/tasks/${encodeURIComponent(hit.taskId ?? "")}`;
    case "customer":
    case "execution":
    case "idempotency_key":
      return `/executions/${encodeURIComponent(hit.executionId ?? "")}`;
    case "actor":
      return `/audit?${new URLSearchParams({ actor: hit.value }).toString()}`;
  }
}

function detailOf(hit: SearchHit): string {
  switch (hit.kind) {
    case "task":
      return [hit.status, hit.context].filter(Boolean).join(" · ");
    case "intent":
      return [hit.taskId, hit.status, hit.context].filter(Boolean).join(" · ");
    case "customer":
    case "execution":
    case "idempotency_key":
      return [hit.context, hit.status, hit.taskId ? `task ${hit.taskId}` : null].filter(Boolean).join(" · ");
    case "actor":
      return hit.context ?? "";
  }
}

export function searchPageHref(q: string): string {
  return q ? `/search?${new URLSearchParams({ q }).toString()}` : "/search";
}

/** The search of `query` for this person, in their tenant (`db` is theirs), drawn for the console. */
export async function loadSearch(db: Db, principal: Principal, query: GlobalSearchQuery): Promise<SearchView> {
  const result = await globalSearch(db, principal, query);
  return {
    query: result.query,
    total: result.total,
    groups: result.groups.map((g) => ({
      kind: g.kind,
      label: searchKindLabels[g.kind],
      more: g.more,
      hits: g.hits.map((hit) => ({
        kind: hit.kind,
        value: hit.value,
        label: hit.kind === "actor" ? shortIdentity(hit.value) : hit.value,
        detail: detailOf(hit),
        href: searchHitHref(hit),
        at: hit.at ? hit.at.toISOString() : null,
      })),
    })),
    notSearched: result.notSearched.map((n) => ({ ...n, label: searchKindLabels[n.kind] })),
  };
}
