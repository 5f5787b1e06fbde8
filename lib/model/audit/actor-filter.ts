import { escapeLikePattern } from "@/lib/core/like-pattern";

/**
 * What an actor filter typed by a person matches. The audit log records
 * full SPIFFE ids (`spiffe://verity.local/system/reconciler`), the console
 * shows them shortened (`system/reconciler`), and people type a part
 * (`reconciler`): a full id matches that actor exactly; anything else
 * matches every actor whose id contains it, case-insensitively.
 */
export type ActorFilter = { kind: "exact"; actor: string } | { kind: "contains"; pattern: string; text: string };

export function actorFilterOf(input: string): ActorFilter {
  const text = input.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return { kind: "exact", actor: text };
  return { kind: "contains", pattern: `%${escapeLikePattern(text)}%`, text };
}

/** Whether `actor` passes the filter: the SQL condition's rule, for what is filtered in memory and for tests. */
export function actorMatches(filter: ActorFilter, actor: string): boolean {
  return filter.kind === "exact" ? actor === filter.actor : actor.toLowerCase().includes(filter.text.toLowerCase());
}
