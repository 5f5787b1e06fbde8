/**
 * A list's address without its empty fields: a plain GET form sends every
 * field (`/tasks?workflow=&status=RUNNING&q=`), and the address people copy,
 * bookmark and share should say only what filters. Null when already clean.
 */
export function withoutEmptyFields(path: string, query: Record<string, string | string[] | undefined>): string | null {
  const search = new URLSearchParams();
  let dropped = false;
  for (const [key, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      if (v.trim() === "") dropped = true;
      else search.append(key, v);
    }
  }
  if (!dropped) return null;
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}
