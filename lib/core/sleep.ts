/**
 * The one wait: `ms` milliseconds, or less if `signal` aborts. Resolves to
 * whether the whole wait happened, so a loop told to stop stops instead of
 * doing one more round of work after it was closed. Never rejects: an abort
 * is an answer, not an error. No Node imports, so the SDK (which runs in any
 * agent process) can use it as the server does.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (!(ms > 0)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
