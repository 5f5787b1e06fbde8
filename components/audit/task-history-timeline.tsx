"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { useEffect, useLayoutEffect, useState, type KeyboardEvent } from "react";
import type { AuditRowView } from "@/lib/adapters/console/audit/audit-format";
import { ConsoleRouteError, fetchConsoleJson } from "@/lib/adapters/console/shared/console-fetch";
import { formatInteger } from "@/lib/adapters/console/shared/format";
import { AuditRowContent } from "@/components/audit/audit-row";
import { shortIdentity } from "@/lib/adapters/console/shared/format";

/** Every row is this tall (two lines; see .audit-row): the window is arithmetic, no measuring. */
const ROW_HEIGHT = 64;
/** Rows rendered above and below the visible ones, so a fast scroll shows rows, not blanks. */
const OVERSCAN = 12;
/** Ask for the next page while this many loaded rows are still below the window. */
const PREFETCH_ROWS = 150;
const PAGE_SIZE = 250;

interface HistoryPage {
  items: AuditRowView[];
  next_cursor: string | null;
  total: number | null;
}

/** What is wrong, one line each: a bad filter's field errors (already in words), else the problem's detail. */
function reasonsOf(error: Error): string[] {
  if (error instanceof ConsoleRouteError && error.fieldErrors.length) return error.fieldErrors.map((e) => e.message);
  return [error.message];
}

/**
 * The merged history of a task, infinitely scrolled and windowed: pages of
 * 250 rows come from the JSON route as the reader nears the end of what is
 * loaded (keyset cursors, so page 80 costs what page 1 does), and only the
 * rows near the viewport are in the DOM, so 20,000 events scroll like 20.
 * Written here rather than taken from a library: with fixed-height rows
 * the window is two divisions, and the console's rows are fixed by design.
 */
export function TaskHistoryTimeline({
  taskId,
  queryString,
  orderLabel,
  onAnnotate,
}: {
  taskId: string;
  queryString: string;
  orderLabel: string;
  /** Offered on every row when the reader may annotate: picks that entry for the correction form. */
  onAnnotate?: (row: AuditRowView) => void;
}) {
  const base = `/api/console/tasks/${encodeURIComponent(taskId)}/history?${queryString}${queryString ? "&" : ""}limit=${PAGE_SIZE}`;
  const query = useInfiniteQuery({
    queryKey: ["task-history", taskId, queryString],
    queryFn: ({ pageParam }) =>
      fetchConsoleJson<HistoryPage>(pageParam ? `${base}&cursor=${encodeURIComponent(pageParam)}` : base),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    // The server answered: asking again gets the same answer. Only a lost request is retried.
    retry: (count, error) => !(error instanceof ConsoleRouteError) && count < 2,
    refetchOnWindowFocus: false,
    staleTime: Infinity,
  });
  const rows = query.data?.pages.flatMap((p) => p.items) ?? [];
  const total = query.data?.pages[0]?.total ?? null;

  // The list scrolls with the page (no inner scroll box): the window of rows is what of the list is inside the
  // browser's window. A callback ref: the list appears only once the first page is in, and is measured then.
  const [viewportEl, setViewportEl] = useState<HTMLDivElement | null>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  useLayoutEffect(() => {
    const el = viewportEl;
    if (!el) return;
    const measure = () => {
      // How far the page has scrolled past the list's top, and how much of it the window shows.
      setScrollTop(Math.max(0, -el.getBoundingClientRect().top));
      setHeight(window.innerHeight || 600);
    };
    measure();
    window.addEventListener("scroll", measure, { passive: true });
    window.addEventListener("resize", measure);
    return () => {
      window.removeEventListener("scroll", measure);
      window.removeEventListener("resize", measure);
    };
  }, [viewportEl]);

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = query;
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage && last >= rows.length - PREFETCH_ROWS) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage, last, rows.length]);

  // Home and End go to the ends of what is loaded (the page scrolls); End keeps loading as it goes.
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const el = event.currentTarget;
    const top = el.getBoundingClientRect().top + window.scrollY;
    if (event.key === "Home") window.scrollTo({ top: Math.max(0, top - 80) });
    else if (event.key === "End") window.scrollTo({ top: top + el.scrollHeight - window.innerHeight + 80 });
    else return;
    event.preventDefault();
  };

  if (query.isPending) {
    return (
      <p className="audit-history__status" role="status">
        Loading the history…
      </p>
    );
  }
  if (query.isError && rows.length === 0) {
    const errors = reasonsOf(query.error);
    return (
      <div className="notice notice--error" role="alert">
        <p className="notice__title">The history cannot be shown with these filters</p>
        <ul>
          {errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      </div>
    );
  }
  if (rows.length === 0) {
    return (
      <p className="audit-history__status" role="status">
        No events match these filters.
      </p>
    );
  }

  const loadedAll = !hasNextPage;
  const innerHeight = (rows.length + (loadedAll ? 0 : 1)) * ROW_HEIGHT;
  return (
    <>
      <p className="audit-history__status" role="status" aria-live="polite">
        {total !== null ? `${formatInteger(total)} event${total === 1 ? "" : "s"}` : null} · {orderLabel} ·{" "}
        {loadedAll ? "all loaded" : `${formatInteger(rows.length)} loaded, more as you scroll`}
        {query.isError ? " · the next page failed to load; scroll to retry" : null}
      </p>
      <div
        ref={setViewportEl}
        className="audit-history__viewport"
        onKeyDown={onKeyDown}
        tabIndex={0}
        role="region"
        aria-label={`History of task ${taskId}: scroll the page, or use Home and End here`}
        data-loaded={rows.length}
        data-total={total ?? undefined}
      >
        <ol className="audit-history__list" style={{ height: innerHeight }}>
          {rows.slice(first, last).map((row, i) => {
            const index = first + i;
            return (
              <li
                key={row.id}
                className="audit-row"
                style={{ transform: `translateY(${index * ROW_HEIGHT}px)` }}
                aria-posinset={index + 1}
                aria-setsize={total ?? -1}
                data-index={index}
                data-entry-id={row.id}
              >
                <AuditRowContent
                  row={row}
                  actorHref={(actor) =>
                    `/tasks/${encodeURIComponent(taskId)}/history?${new URLSearchParams({ actor: shortIdentity(actor) })}`
                  }
                  action={
                    onAnnotate ? (
                      <button
                        type="button"
                        className="button button--small audit-row__annotate"
                        onClick={() => onAnnotate(row)}
                        aria-label={`Annotate entry ${row.stream} #${row.seq}: ${row.title}`}
                      >
                        Annotate
                      </button>
                    ) : undefined
                  }
                />
              </li>
            );
          })}
          {loadedAll ? null : (
            <li
              className="audit-row audit-row--loading"
              style={{ transform: `translateY(${rows.length * ROW_HEIGHT}px)` }}
              aria-hidden="true"
            >
              Loading more events…
            </li>
          )}
        </ol>
      </div>
      {loadedAll ? (
        <p className="hint">
          The end of the history:{" "}
          {orderLabel === "newest first" ? "the task's creation is the last row" : "the newest event is the last row"}.
        </p>
      ) : null}
    </>
  );
}
