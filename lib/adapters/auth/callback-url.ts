/**
 * Where a sign-in (or any redirect of ours) may send someone: a path on this
 * site, or "/". The value is parsed as a URL against the site's origin, the
 * way a browser will read it, and kept only when it resolves to that origin.
 * Control characters and backslashes are refused before parsing: browsers
 * drop tabs and newlines and read `\` as `/`, so `/\t/evil.example` and
 * `/\evil.example` are `//evil.example` to them, another host.
 */

// Only the origin matters; any value works where the real one is not known (relative values resolve the same).
const placeholderOrigin = "http://verity.invalid";

export function sameOriginPath(value: unknown, origin: string = placeholderOrigin): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 2048) return "/";
  if (/[\u0000-\u001f\u007f-\u009f\\]/.test(value)) return "/";
  let base: URL;
  let url: URL;
  try {
    base = new URL(origin);
    url = new URL(value, base);
  } catch {
    return "/";
  }
  if (url.origin !== base.origin || (url.protocol !== "http:" && url.protocol !== "https:")) return "/";
  return `${url.pathname}${url.search}${url.hash}`;
}
