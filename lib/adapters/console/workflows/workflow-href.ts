/**
 * The workflows section's URLs, in one place. No definitions imported here:
 * client components link with these, and the definitions' digests would pull
 * node:crypto's browser polyfill into the page (see task-list-href.ts).
 */
const base = (name: string) => `/workflows/${encodeURIComponent(name)}`;

export function workflowAnchor(name: string): string {
  return `workflow-${name}`;
}

export function workflowVersionHref(name: string, version: number): string {
  return `${base(name)}/${version}`;
}

export function workflowCompareHref(name: string, from?: number, to?: number): string {
  const search = new URLSearchParams();
  if (from !== undefined) search.set("from", String(from));
  if (to !== undefined) search.set("to", String(to));
  const query = search.toString();
  return query ? `${base(name)}/compare?${query}` : `${base(name)}/compare`;
}

export function workflowMigrateHref(name: string, from?: number, to?: number): string {
  return workflowCompareHref(name, from, to).replace(/\/compare(\?|$)/, "/migrate$1");
}
