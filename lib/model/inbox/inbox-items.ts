import type { GateName } from "@/lib/model/tasks/task-state";
import { can, type Principal } from "@/lib/model/permissions";
import { gateRulesOf } from "@/lib/model/workflows";
import { edgesFrom, isTerminal, type WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";

/**
 * The inbox's rules as data (docs/inbox.md): the kinds of things that wait
 * on a person, who may act on each, which gates a task waits for, and the
 * list's sort and filters as they stand in the URL. Pure: the items are
 * gathered by lib/use-cases/inbox/gather-inbox.ts.
 */

export const inboxKinds = ["review", "escalated_task", "gate", "alert"] as const;
export type InboxKind = (typeof inboxKinds)[number];

export const inboxKindLabel: Record<InboxKind, string> = {
  review: "Frozen action",
  escalated_task: "Escalated task",
  gate: "Gate approval",
  alert: "Alert",
};

/** What the provider says of a frozen action's key, where it was asked. */
export type ProviderVerdict = "FOUND" | "NOT_FOUND" | "UNKNOWN";

export interface InboxClaimView {
  claimedBy: string | null;
  claimedAt: Date | null;
  /** The claim row's version (0: never claimed): the CAS target of claim and unclaim. */
  version: number;
}

export interface InboxItem {
  /** Stable across renders: `review:<id>`, `task:<id>`, `gate:<task id>:<gate>`, `alert:<id>`; what a claim is keyed by. */
  key: string;
  kind: InboxKind;
  /** What waits, in words ("Refund of $750.00 frozen", "security_approved on …"). */
  what: string;
  /** Why it waits on a person. */
  why: string;
  /** Where Enter goes: the page where it is decided. */
  href: string;
  taskId: string | null;
  /** Frozen actions: the held execution, whose key the provider is asked about. */
  executionId: string | null;
  amountMinor: number | null;
  currency: string | null;
  /** Since when it has waited. */
  since: Date;
  /** Frozen actions only: what the provider said when asked (filled by the console, which asks). */
  verdict?: ProviderVerdict | null;
  claim: InboxClaimView;
}

/** The kinds this principal may act on: a role sees only what it can do something about. */
export function inboxKindsFor(principal: Pick<Principal, "role" | "kind">): InboxKind[] {
  // A role without an inbox (an auditor) sees none, even a gate a published workflow lets it set: that stays on the task page.
  if (!can(principal, "inbox:read")) return [];
  return inboxKinds.filter((kind) => {
    switch (kind) {
      case "review":
      case "escalated_task":
        return can(principal, "tasks:transition");
      case "gate":
        // Which gates, by role, is per workflow (gatesAwaiting); people only.
        return principal.kind === "user";
      case "alert":
        return can(principal, "alerts:act");
    }
  });
}

/**
 * The human gates a task in `status` waits for: those a way forward needs
 * (an edge's gates_true guard, or a target state's requiresGates), that
 * have a person's rule, are not yet set, and that `role` may set. A
 * terminal task waits for nothing.
 */
export function gatesAwaiting(
  def: WorkflowDefinition,
  status: string,
  gates: Partial<Record<GateName, boolean>>,
  role: Principal["role"] | null,
): GateName[] {
  if (isTerminal(def, status)) return [];
  const rules = gateRulesOf(def);
  const needed = new Set<GateName>();
  for (const edge of edgesFrom(def, status)) {
    for (const guard of edge.guards ?? []) if (guard.kind === "gates_true") for (const g of guard.gates) needed.add(g);
    for (const g of def.states[edge.to]?.requiresGates ?? []) needed.add(g);
  }
  return [...needed].filter((g) => {
    const rule = rules[g];
    return rule !== undefined && gates[g] !== true && (role === null || rule.roles.includes(role));
  });
}

export const inboxSorts = ["age", "kind", "amount"] as const;
export type InboxSort = (typeof inboxSorts)[number];
export const inboxClaimFilters = ["mine", "unclaimed"] as const;
export type InboxClaimFilter = (typeof inboxClaimFilters)[number];

export interface InboxQuery {
  kind: InboxKind | null;
  claimed: InboxClaimFilter | null;
  /** age: oldest first (the default); kind: in inboxKinds' order, oldest first within; amount: largest first. */
  sort: InboxSort;
}

function first(value: string | string[] | null | undefined): string | undefined {
  return (Array.isArray(value) ? value[0] : value)?.trim().toLowerCase();
}

function oneOf<T extends string>(values: readonly T[], raw: string | undefined): T | null {
  return values.find((v) => v === raw) ?? null;
}

/** Anything unknown falls back to the whole inbox rather than failing the page. */
export function parseInboxQuery(params: Record<string, string | string[] | undefined>): InboxQuery {
  return {
    kind: oneOf(inboxKinds, first(params.kind)),
    claimed: oneOf(inboxClaimFilters, first(params.claimed)),
    sort: oneOf(inboxSorts, first(params.sort)) ?? "age",
  };
}

/** The URL of a query, its empty and default fields left out. */
export function inboxHref(query: Partial<InboxQuery>): string {
  const params = new URLSearchParams();
  if (query.kind) params.set("kind", query.kind);
  if (query.claimed) params.set("claimed", query.claimed);
  if (query.sort && query.sort !== "age") params.set("sort", query.sort);
  const search = params.toString();
  return search ? `/inbox?${search}` : "/inbox";
}

function byAge(a: InboxItem, b: InboxItem): number {
  return a.since.getTime() - b.since.getTime() || a.key.localeCompare(b.key);
}

/**
 * The items a query shows, in its order. `viewer` is the person's identity:
 * "mine" is what they claimed. Amounts in different currencies are compared
 * as numbers of minor units; an item without an amount comes last.
 */
export function selectInboxItems(items: readonly InboxItem[], query: InboxQuery, viewer: string): InboxItem[] {
  const shown = items.filter(
    (item) =>
      (query.kind === null || item.kind === query.kind) &&
      (query.claimed === null ||
        (query.claimed === "mine" ? item.claim.claimedBy === viewer : item.claim.claimedBy === null)),
  );
  switch (query.sort) {
    case "age":
      return shown.sort(byAge);
    case "kind":
      return shown.sort((a, b) => inboxKinds.indexOf(a.kind) - inboxKinds.indexOf(b.kind) || byAge(a, b));
    case "amount":
      return shown.sort((a, b) => (b.amountMinor ?? -1) - (a.amountMinor ?? -1) || byAge(a, b));
  }
}

/** An item's key, checked: what a claim form may name. */
export function isInboxItemKey(value: string): boolean {
  // Ids may hold colons (a task id is the client's); a gate's name is its last part.
  return /^(review|task|alert):\S{1,200}$|^gate:\S{1,200}:[a-z_]{1,64}$/.test(value);
}
