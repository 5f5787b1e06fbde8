/**
 * How long something has waited or lasted, read at a glance: "45 s",
 * "12 min", "3 h", "3 h 5 min", "2 d", "2 d 4 h". The one duration formatter:
 * the console's (ages, waiting times, decision times, intervals) and the
 * alerts' and findings' messages; pure, so server and client components
 * render the same words.
 *
 * Two units at most, the smaller left out when it is zero. Every unit is
 * truncated, never rounded up: a refund frozen for 59 min 40 s has not yet
 * waited an hour, and an age only grows from one render to the next. A
 * negative span (clocks a little apart) reads "0 s".
 */
export function formatDuration(ms: number): string {
  const s = Number.isFinite(ms) ? Math.max(0, Math.floor(ms / 1000)) : 0;
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}
