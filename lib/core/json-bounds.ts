import type { z } from "zod";

/**
 * Bounds on free-form JSON (evidence, results, requests, event payloads):
 * how deep it nests and how many bytes its canonical JSON takes. A 9 KB value
 * nested 1,500 deep costs nothing to send and megabytes to render, and deep
 * enough nesting overflows every recursive walk after it (serialisers,
 * digests, the database's jsonb parser); so such a field is refused at the
 * door with a 400 that names it.
 */
const JSON_FIELD_MAX_DEPTH = 32;
const JSON_FIELD_MAX_BYTES = 64 * 1024;

/**
 * How deep `value` nests (a scalar is 0, `{}` and `[]` are 1), walked with
 * an explicit stack so that any depth can be measured; stops counting past
 * `limit` (the answer is then `limit + 1`).
 */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, here]);
  }
  return deepest;
}

/** The UTF-8 size of `value` as JSON (key order does not change it: canonical JSON has the same bytes). */
function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value) ?? "").byteLength;
}

/**
 * `schema` (a free-form JSON field's) with its depth and size bounded; the
 * issue lands on the field's own path, so the 400 names it.
 */
export function boundedJson<S extends z.ZodType>(schema: S, bounds: { maxDepth?: number; maxBytes?: number } = {}): S {
  const maxDepth = bounds.maxDepth ?? JSON_FIELD_MAX_DEPTH;
  const maxBytes = bounds.maxBytes ?? JSON_FIELD_MAX_BYTES;
  return schema.superRefine((value, ctx) => {
    if (jsonDepth(value, maxDepth) > maxDepth) {
      ctx.addIssue({ code: "custom", message: `nests deeper than ${maxDepth} levels` });
      return;
    }
    const bytes = jsonBytes(value);
    if (bytes > maxBytes) ctx.addIssue({ code: "custom", message: `is ${bytes} bytes of JSON, more than ${maxBytes}` });
  }) as S;
}

/**
 * The nesting depth of JSON text without parsing it (JSON.parse and every
 * walk after it recurse), and the top-level member it happened in: one pass
 * over the characters, strings skipped. Stops at the first place deeper
 * than `limit`.
 */
export function scanJsonTextDepth(
  text: string,
  limit: number,
): { tooDeep: false } | { tooDeep: true; member: string | null } {
  let depth = 0;
  let rootIsObject = false;
  let lastString: string | null = null;
  let member: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
      if (depth === 1 && rootIsObject) lastString = text.slice(start, i + 1);
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (depth === 0) rootIsObject = c === 0x7b;
      depth++;
      if (depth > limit) return { tooDeep: true, member };
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    } else if (c === 0x3a /* : */ && depth === 1 && rootIsObject && lastString !== null) {
      try {
        member = JSON.parse(lastString) as string;
      } catch {
        member = null;
      }
    }
  }
  return { tooDeep: false };
}
