"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { inboxKindLabel, type InboxItem } from "@/lib/model/inbox/inbox-items";
import { formatMoney } from "@/lib/adapters/console/reviews/reviews-format";
import { shortIdentity } from "@/lib/adapters/console/shared/format";
import { claimLostAnswer, idleClaimForm } from "@/lib/adapters/console/inbox/inbox-form";
import { claimInboxItemAction } from "@/app/(console)/inbox/actions";
import { RelativeTime } from "@/components/relative-time";
import { TruncatedText } from "@/components/truncated-text";
import { VerdictBadge } from "@/components/reviews/verdict-badge";
import { useServerActionForm } from "@/components/server-action-form";

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** Claim or release one item; the claim's version is the CAS target, so two people claiming at once leave one claim. */
function ClaimCell({ item, viewer, formId }: { item: InboxItem; viewer: string; formId: string }) {
  const { state, pending, submit } = useServerActionForm(claimInboxItemAction, idleClaimForm, {
    lostAnswer: claimLostAnswer,
  });
  const holder = item.claim.claimedBy;
  const mine = holder === viewer;
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    submit(event.currentTarget, null);
  }
  return (
    <div className="inbox-claim">
      {holder ? (
        <p className="inbox-claim__who" data-testid="claim-holder">
          {mine ? "You claimed it" : `Claimed by ${shortIdentity(holder)}`}
          {item.claim.claimedAt ? (
            <>
              {" "}
              <RelativeTime value={item.claim.claimedAt} />
            </>
          ) : null}
        </p>
      ) : (
        <p className="inbox-claim__who inbox-claim__who--none">Unclaimed</p>
      )}
      {holder === null || mine ? (
        <form id={formId} onSubmit={onSubmit} aria-busy={pending}>
          <input type="hidden" name="item" value={item.key} />
          <input type="hidden" name="expectedVersion" value={item.claim.version} />
          <input type="hidden" name="action" value={mine ? "unclaim" : "claim"} />
          <button type="submit" className="button button--small" disabled={pending}>
            {mine ? "Release" : "Claim"}
            <span className="visually-hidden"> {item.what}</span>
          </button>
        </form>
      ) : null}
      <p role="status" className={state.status === "done" || state.status === "idle" ? "hint" : "inbox-claim__error"}>
        {state.status === "idle" ? "" : state.message}
      </p>
    </div>
  );
}

/**
 * The inbox's rows, worked by keyboard: j and k move the selection (the
 * row's link takes the focus, so a screen reader reads it), Enter opens it,
 * c claims or releases it. Keys typed into a field are left alone.
 */
export function InboxList({ items, viewer }: { items: InboxItem[]; viewer: string }) {
  const router = useRouter();
  const [selected, setSelected] = useState(0);
  const links = useRef<Array<HTMLAnchorElement | null>>([]);
  const selectedIndex = Math.min(selected, items.length - 1);

  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (event.defaultPrevented || event.metaKey || event.ctrlKey || event.altKey || isTyping(event.target)) return;
      // The row that holds the focus is the one a key acts on: a key pressed right after the focus moved
      // can arrive before the selection's re-render has given this handler the new index.
      const focusedRow = event.target instanceof Element ? event.target.closest("tr[data-index]") : null;
      const index = focusedRow ? Number(focusedRow.getAttribute("data-index")) : selectedIndex;
      const move = (to: number) => {
        const next = Math.max(0, Math.min(items.length - 1, to));
        setSelected(next);
        links.current[next]?.focus();
        event.preventDefault();
      };
      switch (event.key) {
        case "j":
          move(index + 1);
          break;
        case "k":
          move(index - 1);
          break;
        case "Enter": {
          // A focused link or button does its own thing; from anywhere else Enter opens the selected item.
          const target = event.target as HTMLElement | null;
          if (target?.closest("a, button")) return;
          const item = items[index];
          if (item) {
            event.preventDefault();
            router.push(item.href);
          }
          break;
        }
        case "c": {
          const form = document.getElementById(`inbox-claim-${index}`);
          if (form instanceof HTMLFormElement) {
            event.preventDefault();
            form.requestSubmit();
          }
          break;
        }
      }
    }
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [items, selectedIndex, router]);

  return (
    <>
      <p className="hint inbox-keys" id="inbox-keys">
        Keyboard: <kbd>j</kbd> and <kbd>k</kbd> move, <kbd>Enter</kbd> opens, <kbd>c</kbd> claims or releases.
      </p>
      <div className="table-wrap">
        <table className="table inbox-table" aria-describedby="inbox-keys">
          <caption className="visually-hidden">Items waiting on people</caption>
          <thead>
            <tr>
              <th scope="col">What waits</th>
              <th scope="col" className="col-p2">
                Amount
              </th>
              <th scope="col" className="col-p2">
                Waiting
              </th>
              <th scope="col" className="col-p3">
                Task
              </th>
              <th scope="col">Claim</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item, i) => (
              <tr
                key={item.key}
                className={i === selectedIndex ? "inbox-row inbox-row--selected" : "inbox-row"}
                data-testid="inbox-row"
                data-index={i}
                data-kind={item.kind}
                data-key={item.key}
                onFocus={() => setSelected(i)}
              >
                <th scope="row">
                  <span className={`badge badge--${item.kind === "alert" ? "danger" : "attention"} inbox-kind`}>
                    {inboxKindLabel[item.kind]}
                  </span>
                  <VerdictBadge verdict={item.verdict} />
                  <Link
                    href={item.href}
                    className="inbox-row__what"
                    ref={(el) => {
                      links.current[i] = el;
                    }}
                  >
                    {item.what}
                  </Link>
                  <span className="inbox-row__why">{item.why}</span>
                  {/* A phone has no room for the Waiting column: the age goes under the item instead. */}
                  <span className="inbox-row__age-narrow">
                    Waiting since <RelativeTime value={item.since} />
                  </span>
                </th>
                <td className="col-p2 money">
                  {item.amountMinor !== null ? formatMoney(item.amountMinor, item.currency) : "—"}
                </td>
                <td className="col-p2">
                  <RelativeTime value={item.since} />
                </td>
                <td className="col-p3">
                  {item.taskId ? (
                    <Link href={`/tasks/${encodeURIComponent(item.taskId)}`} className="task-link">
                      <TruncatedText value={item.taskId} className="mono" />
                    </Link>
                  ) : (
                    "—"
                  )}
                </td>
                <td>
                  <ClaimCell item={item} viewer={viewer} formId={`inbox-claim-${i}`} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
