import { createHash } from "node:crypto";
import type { Db } from "@/lib/db/client";
import type { Principal } from "@/lib/model/permissions";
import {
  inboxKinds,
  inboxKindsFor,
  selectInboxItems,
  type InboxItem,
  type InboxKind,
  type InboxQuery,
} from "@/lib/model/inbox/inbox-items";
import { gatherInbox } from "@/lib/use-cases/inbox/gather-inbox";
import { providerVerdicts } from "@/lib/adapters/console/reviews/reviews";

/**
 * The inbox page's loader (docs/inbox.md): the principal's items from
 * gatherInbox, the frozen actions' provider verdicts asked now, and the
 * query's selection. The count is the whole inbox, whatever the filter.
 */

export interface InboxData {
  query: InboxQuery;
  /** The selection, in the query's order. */
  items: InboxItem[];
  /** Everything waiting on this person, unfiltered: the navigation badge's number. */
  total: number;
  countsByKind: Record<InboxKind, number>;
  /** The kinds this role acts on (empty: the role has no inbox). */
  kinds: InboxKind[];
  /** Changes whenever an item or a claim changes: the live refresh compares it. */
  token: string;
}

function tokenOf(items: readonly InboxItem[]): string {
  const parts = items.map((i) => `${i.key}@${i.claim.version}`).sort();
  return createHash("sha256").update(parts.join(",")).digest("base64url").slice(0, 22);
}

export async function loadInbox(db: Db, principal: Principal, query: InboxQuery): Promise<InboxData> {
  const all = await gatherInbox(db, principal);
  const verdicts = await providerVerdicts(
    db,
    all.flatMap((i) =>
      i.kind === "review" && i.executionId ? [{ id: i.key, executionId: i.executionId, status: "OPEN" as const }] : [],
    ),
  );
  for (const item of all) if (item.kind === "review") item.verdict = verdicts.get(item.key) ?? null;
  const countsByKind = Object.fromEntries(inboxKinds.map((k) => [k, all.filter((i) => i.kind === k).length])) as Record<
    InboxKind,
    number
  >;
  return {
    query,
    items: selectInboxItems(all, query, principal.identity),
    total: all.length,
    countsByKind,
    kinds: inboxKindsFor(principal),
    token: tokenOf(all),
  };
}

/** The badge's number and the page's change token, without asking any provider. */
export async function inboxSummary(db: Db, principal: Principal): Promise<{ total: number; token: string }> {
  const all = await gatherInbox(db, principal);
  return { total: all.length, token: tokenOf(all) };
}
