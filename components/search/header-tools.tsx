"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useId, useRef, useState } from "react";
import { fetchConsoleJson } from "@/lib/adapters/console/shared/console-fetch";
import type { SearchView } from "@/lib/adapters/console/search/search";
import { goShortcuts, isTypingTarget, shortcutAction } from "@/lib/adapters/console/search/shortcuts";
import "@/components/search/search.css";

/**
 * The header's global search and keyboard shortcuts (docs/search.md): a
 * button (an icon on a narrow screen) opening the search dialog, also opened
 * by `/` and Ctrl/⌘K; `?` opens the list of shortcuts; `g` then a letter
 * goes to a section. No shortcut fires while the person types in a field.
 * Both dialogs are native <dialog>s opened modally: focus stays inside,
 * Escape closes them, and focus returns where it was.
 */
export function HeaderTools() {
  const router = useRouter();
  const searchDialog = useRef<HTMLDialogElement>(null);
  const helpDialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const pendingG = useRef<number>(0);
  const openSearch = useCallback(() => {
    if (!searchDialog.current?.open) searchDialog.current?.showModal();
    input.current?.focus();
    input.current?.select();
  }, []);
  const openHelp = useCallback(() => {
    if (!helpDialog.current?.open) helpDialog.current?.showModal();
  }, []);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const anyOpen = searchDialog.current?.open || helpDialog.current?.open;
      const action = shortcutAction(event, {
        typing: isTypingTarget(event.target),
        afterG: Date.now() - pendingG.current < 1500,
        dialogOpen: Boolean(anyOpen),
      });
      if (!action) return;
      event.preventDefault();
      pendingG.current = 0;
      if (action.kind === "search") openSearch();
      else if (action.kind === "help") openHelp();
      else if (action.kind === "g") pendingG.current = Date.now();
      else router.push(action.href);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [openHelp, openSearch, router]);

  return (
    <div className="header-tools">
      <button
        type="button"
        className="header-tools__button"
        onClick={openSearch}
        aria-haspopup="dialog"
        aria-keyshortcuts="/ Control+K Meta+K"
        data-testid="global-search-button"
      >
        <span className="search-icon" aria-hidden="true" />
        <span className="header-tools__label">Search</span>
        <kbd aria-hidden="true">/</kbd>
      </button>
      <SearchDialog dialog={searchDialog} input={input} />
      <dialog ref={helpDialog} className="console-dialog" aria-labelledby="shortcuts-title">
        <div className="console-dialog__body">
          <div className="console-dialog__head">
            <h2 id="shortcuts-title">Keyboard shortcuts</h2>
            <button type="button" className="button" onClick={() => helpDialog.current?.close()}>
              Close
            </button>
          </div>
          <dl className="shortcut-list" data-testid="shortcut-list">
            <dt>
              <kbd>/</kbd> or <kbd>Ctrl</kbd> <kbd>K</kbd>
            </dt>
            <dd>Search tasks, intents, customers, executions, keys and actors</dd>
            {goShortcuts.map((g) => (
              <div key={g.key} className="shortcut-list__row" style={{ display: "contents" }}>
                <dt>
                  <kbd>g</kbd> <kbd>{g.key}</kbd>
                </dt>
                <dd>Go to {g.label}</dd>
              </div>
            ))}
            <dt>
              <kbd>?</kbd>
            </dt>
            <dd>This list</dd>
            <dt>
              <kbd>Esc</kbd>
            </dt>
            <dd>Close a dialog or menu</dd>
          </dl>
          <p className="hint">In lists: j/k to move, Enter to open. Shortcuts never fire while you type in a field.</p>
        </div>
      </dialog>
    </div>
  );
}

type Found =
  { kind: "idle" } | { kind: "loading" } | { kind: "done"; view: SearchView } | { kind: "error"; message: string };

function SearchDialog({
  dialog,
  input,
}: {
  dialog: React.RefObject<HTMLDialogElement | null>;
  input: React.RefObject<HTMLInputElement | null>;
}) {
  const [q, setQ] = useState("");
  const [found, setFound] = useState<Found>({ kind: "idle" });
  const statusId = useId();
  const router = useRouter();

  useEffect(() => {
    const text = q.trim();
    if (text.length < 2) return;
    const controller = new AbortController();
    // A pause in typing, not every key: one query per word typed.
    const timer = setTimeout(() => {
      setFound({ kind: "loading" });
      fetchConsoleJson<SearchView>(`/api/console/search?${new URLSearchParams({ q: text, limit: "5" })}`, {
        signal: controller.signal,
      })
        .then((view) => setFound({ kind: "done", view }))
        .catch((error: unknown) => {
          if (controller.signal.aborted) return;
          setFound({ kind: "error", message: error instanceof Error ? error.message : "The search failed." });
        });
    }, 200);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [q]);

  const close = () => dialog.current?.close();
  const shown: Found = q.trim().length < 2 ? { kind: "idle" } : found;

  return (
    <dialog
      ref={dialog}
      className="console-dialog search-dialog"
      aria-labelledby={`${statusId}-title`}
      onClick={(event) => {
        // A click on the backdrop (the dialog element itself, outside its body) closes it; a followed link too.
        if (event.target === dialog.current || (event.target as Element).closest("a")) close();
      }}
      onKeyDown={(event) => {
        if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
        // Arrows move between the box and the results, as in a list box.
        const items = [
          input.current,
          ...Array.from(dialog.current?.querySelectorAll<HTMLElement>(".search-hit, .search-dialog__all") ?? []),
        ].filter((el): el is HTMLElement => el !== null);
        const at = items.indexOf(document.activeElement as HTMLElement);
        const next = items[(at + (event.key === "ArrowDown" ? 1 : -1) + items.length) % items.length];
        if (next) {
          event.preventDefault();
          next.focus();
        }
      }}
    >
      <div className="console-dialog__body">
        <div className="console-dialog__head">
          <h2 id={`${statusId}-title`}>Search</h2>
          <button type="button" className="button" onClick={close}>
            Close
          </button>
        </div>
        <form
          role="search"
          className="search-dialog__form"
          action="/search"
          method="get"
          onSubmit={(event) => {
            event.preventDefault();
            if (q.trim().length < 2) return;
            close();
            router.push(`/search?${new URLSearchParams({ q: q.trim() })}`);
          }}
        >
          <label htmlFor={`${statusId}-q`} className="visually-hidden">
            Search for
          </label>
          <input
            ref={input}
            id={`${statusId}-q`}
            name="q"
            type="search"
            autoComplete="off"
            placeholder="Task id, intent, customer, execution, key or actor"
            value={q}
            maxLength={200}
            onChange={(event) => setQ(event.target.value)}
            aria-describedby={`${statusId}-status`}
            data-testid="global-search-input"
          />
          <button type="submit" className="button button--primary">
            Search
          </button>
        </form>
        <p id={`${statusId}-status`} className="search-dialog__status" role="status">
          {shown.kind === "idle"
            ? "Type at least 2 characters. Arrow keys move through the results; Enter on the box opens every result."
            : shown.kind === "loading"
              ? "Searching…"
              : shown.kind === "error"
                ? shown.message
                : shown.view.total === 0
                  ? `Nothing matches “${shown.view.query}”.`
                  : `${shown.view.total} ${shown.view.total === 1 ? "result" : "results"}.`}
        </p>
        {shown.kind === "done" ? (
          <div data-testid="global-search-results">
            {shown.view.groups.map((group) => (
              <section key={group.kind} className="search-group" aria-label={group.label}>
                <h3>{group.label}</h3>
                <ul className="search-hits">
                  {group.hits.map((hit) => (
                    <li key={`${hit.href}-${hit.value}`}>
                      <Link href={hit.href} className="search-hit">
                        <span className="search-hit__value mono">{hit.label}</span>
                        <span className="search-hit__detail">{hit.detail}</span>
                      </Link>
                    </li>
                  ))}
                </ul>
              </section>
            ))}
            {shown.view.notSearched.map((n) => (
              <p key={n.kind} className="hint">
                <strong>{n.label}:</strong> {n.why}
              </p>
            ))}
            <p>
              <Link
                className="search-dialog__all"
                href={`/search?${new URLSearchParams({ q: shown.view.query })}`}
                prefetch={false}
              >
                Every result for “{shown.view.query}”
              </Link>
            </p>
          </div>
        ) : null}
      </div>
    </dialog>
  );
}
