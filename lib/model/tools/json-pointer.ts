/**
 * RFC 6901 JSON pointers (`/amount_cents`, `/target/env`): how a tool's
 * definition says where in its request the amount, the currency and the
 * fields that identify the effect are, without Verity knowing the tool.
 */

/** The pointer's reference tokens, unescaped; null when it is not a pointer. */
export function pointerTokens(pointer: string): string[] | null {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) return null;
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** The value at `pointer` in `doc`, or undefined when there is none. */
export function valueAtPointer(doc: unknown, pointer: string): unknown {
  const tokens = pointerTokens(pointer);
  if (!tokens) return undefined;
  let at: unknown = doc;
  for (const token of tokens) {
    if (at === null || typeof at !== "object") return undefined;
    if (Array.isArray(at)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      at = at[Number(token)];
    } else {
      if (!Object.hasOwn(at, token)) return undefined;
      at = (at as Record<string, unknown>)[token];
    }
  }
  return at;
}

/** The pointer as the dotted field name problems are reported under: `/target/env` → `target.env`. */
export function pointerAsField(pointer: string): string {
  return (pointerTokens(pointer) ?? [pointer]).join(".");
}
