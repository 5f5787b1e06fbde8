/**
 * JSON for people to read on a page: pretty-printed, nested no deeper than
 * `maxDepth` (deeper members shown as `{…}` / `[…]`) and cut at `maxChars`.
 * A page renders evidence, results and payloads as they were stored; one
 * value nested 1,500 deep once made a task page 18 MB, because every level
 * of indentation repeats on every line below it. Stored values are bounded
 * now (lib/core/json-bounds.ts), but not every row predates that, and the
 * printer never recurses past `maxDepth`, so no value can overflow it.
 */
export interface JsonPreview {
  /** What the page shows first. */
  head: string;
  /** The rest, for a "show more" disclosure; empty when `head` is all of it. */
  rest: string;
  /** Characters neither part holds (past `maxTotalChars`, or members deeper than `maxDepth`). */
  omitted: boolean;
}

export function jsonPreview(
  value: unknown,
  options: { maxChars?: number; maxTotalChars?: number; maxDepth?: number } = {},
): JsonPreview {
  const maxChars = options.maxChars ?? 4_000;
  const maxTotalChars = options.maxTotalChars ?? 256 * 1024;
  const maxDepth = options.maxDepth ?? 32;
  let out = "";
  let omitted = false;
  let full = false;
  const write = (text: string) => {
    if (full) return;
    if (out.length + text.length > maxTotalChars) {
      out += text.slice(0, maxTotalChars - out.length);
      full = true;
      omitted = true;
      return;
    }
    out += text;
  };
  const print = (v: unknown, depth: number) => {
    if (full) return;
    if (v === null || typeof v !== "object") {
      write(JSON.stringify(v) ?? "null");
      return;
    }
    const isArray = Array.isArray(v);
    const entries: Array<[string | null, unknown]> = isArray
      ? v.map((item): [null, unknown] => [null, item])
      : Object.entries(v).filter(([, member]) => member !== undefined);
    if (entries.length === 0) return write(isArray ? "[]" : "{}");
    if (depth >= maxDepth) {
      omitted = true;
      return write(isArray ? "[…]" : "{…}");
    }
    const indent = "  ".repeat(depth + 1);
    write(isArray ? "[\n" : "{\n");
    entries.forEach(([key, member], i) => {
      write(key === null ? indent : `${indent}${JSON.stringify(key)}: `);
      print(member, depth + 1);
      write(i < entries.length - 1 ? ",\n" : "\n");
    });
    write(`${"  ".repeat(depth)}${isArray ? "]" : "}"}`);
  };
  print(value, 0);
  if (out.length <= maxChars) return { head: out, rest: "", omitted };
  // Cut at a line's end when one is near, so the first part ends on whole lines.
  const lineEnd = out.lastIndexOf("\n", maxChars);
  const cut = lineEnd > maxChars / 2 ? lineEnd : maxChars;
  return { head: out.slice(0, cut), rest: out.slice(cut), omitted };
}
