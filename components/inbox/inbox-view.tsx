import Link from "next/link";
import { inboxHref, inboxKindLabel, inboxKinds, type InboxQuery } from "@/lib/model/inbox/inbox-items";
import type { InboxData } from "@/lib/adapters/console/inbox/inbox";
import { EmptyState } from "@/components/empty-state";
import { LiveRefresh } from "@/components/live-refresh";
import { InboxList } from "@/components/inbox/inbox-list";
import "@/components/inbox/inbox.css";

const sortLabel: Record<InboxQuery["sort"], string> = { age: "Oldest first", kind: "Kind", amount: "Largest amount" };
const claimedLabel = { all: "Everyone's", mine: "Claimed by me", unclaimed: "Unclaimed" } as const;

/** One row of links that each change one field of the query, the current one marked. */
function QueryLinks<V extends string>({
  label,
  options,
  current,
  href,
}: {
  label: string;
  options: ReadonlyArray<{ value: V; text: string; count?: number }>;
  current: V;
  href: (value: V) => string;
}) {
  return (
    <nav aria-label={label} className="review-tabs inbox-links">
      <span className="inbox-links__label" aria-hidden="true">
        {label}:
      </span>
      <ul>
        {options.map((o) => (
          <li key={o.value}>
            <Link href={href(o.value)} aria-current={o.value === current ? "page" : undefined}>
              {o.text}
              {o.count !== undefined ? <span className="count-badge">{o.count}</span> : null}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/**
 * Everything waiting on the signed-in person (docs/inbox.md): filters and
 * sort in the URL, the total, and the list, worked with j/k, Enter and c.
 */
export function InboxView({ data, viewer }: { data: InboxData; viewer: string }) {
  const { query } = data;
  const filtered = query.kind !== null || query.claimed !== null;
  return (
    <>
      <header className="page-header">
        <div className="page-header__row">
          <h1>Inbox</h1>
          <div className="page-header__aside">
            <LiveRefresh
              url="/api/console/inbox/count"
              token={data.token}
              topic={{ kinds: ["review", "task", "alert", "inbox_claim"] }}
              what="inbox"
            />
          </div>
        </div>
        <p className="lede">
          Everything waiting on a person that your role can act on: frozen actions to decide, escalated tasks, gates to
          approve and alerts to handle. Claim an item so the others see you are on it.
        </p>
      </header>
      <p className="inbox-total" data-testid="inbox-total">
        <strong>{data.total}</strong> {data.total === 1 ? "item waits" : "items wait"} on people
        {filtered ? (
          <>
            {" "}
            · {data.items.length} shown · <Link href={inboxHref({ sort: query.sort })}>show all</Link>
          </>
        ) : null}
      </p>
      <div className="inbox-controls">
        <QueryLinks
          label="Kind"
          current={query.kind ?? "all"}
          options={[
            { value: "all", text: "All", count: data.total },
            ...inboxKinds
              .filter((k) => data.kinds.includes(k))
              .map((k) => ({ value: k, text: inboxKindLabel[k], count: data.countsByKind[k] })),
          ]}
          href={(v) => inboxHref({ ...query, kind: v === "all" ? null : v })}
        />
        <QueryLinks
          label="Claimed"
          current={query.claimed ?? "all"}
          options={(["all", "mine", "unclaimed"] as const).map((v) => ({ value: v, text: claimedLabel[v] }))}
          href={(v) => inboxHref({ ...query, claimed: v === "all" ? null : v })}
        />
        <QueryLinks
          label="Sort"
          current={query.sort}
          options={(["age", "kind", "amount"] as const).map((v) => ({ value: v, text: sortLabel[v] }))}
          href={(v) => inboxHref({ ...query, sort: v })}
        />
      </div>
      {data.kinds.length === 0 ? (
        <EmptyState title="Nothing here is yours to act on">
          <p>Your role decides nothing that waits on people, so your inbox stays empty.</p>
        </EmptyState>
      ) : data.items.length === 0 ? (
        <EmptyState title={filtered ? "Nothing matches these filters" : "Nothing waits on people"}>
          <p>
            {filtered ? (
              <>
                {data.total} {data.total === 1 ? "item waits" : "items wait"} in all.{" "}
                <Link href={inboxHref({ sort: query.sort })}>Show every item</Link>.
              </>
            ) : (
              "Frozen actions, escalated tasks, gates waiting for your role and open alerts appear here as they arrive."
            )}
          </p>
        </EmptyState>
      ) : (
        <InboxList items={data.items} viewer={viewer} />
      )}
    </>
  );
}
