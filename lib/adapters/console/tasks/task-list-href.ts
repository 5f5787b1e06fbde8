/**
 * The task list's URL for a set of filters. Apart from task-list-query.ts
 * because client components (the dashboard's links) need it, and that module
 * reaches the workflow definitions, whose digests pull node:crypto's browser
 * polyfill, and its eval probes, into the page.
 */
export function taskListHref(params: {
  workflow?: string;
  status?: string;
  q?: string;
  actor?: string;
  /** "created": by creation; the default (by last change) is left out of the URL. */
  sort?: string;
  /** "asc": oldest first; the default (newest first) is left out of the URL. */
  order?: string;
  cursor?: string;
}): string {
  const search = new URLSearchParams();
  for (const key of ["workflow", "status", "q", "actor", "sort", "order", "cursor"] as const) {
    if (key === "sort" && params.sort !== "created") continue;
    if (key === "order" && params.order !== "asc") continue;
    const value = params[key];
    if (value) search.set(key, value);
  }
  const query = search.toString();
  return query ? `/tasks?${query}` : "/tasks";
}
