import { validationError } from "@/lib/adapters/http/problem";

/**
 * URL search parameters as a plain object for a strict zod schema, which then
 * names unknown parameters the same way it names unknown body fields. A
 * parameter given twice is refused: silently taking one of them would hide a
 * client bug.
 */
export function queryOf(url: string): Record<string, string> {
  const params = new URL(url).searchParams;
  const out: Record<string, string> = {};
  const repeated = new Set<string>();
  for (const [key, value] of params) {
    if (Object.hasOwn(out, key)) repeated.add(key);
    out[key] = value;
  }
  if (repeated.size > 0)
    throw validationError([...repeated].map((field) => ({ field, message: "given more than once; send it once" })));
  return out;
}
