import type { DatabaseHandle } from "@/lib/db/client";
import type { TestDatabase } from "@/tests/helpers/pglite";
/**
 * A route handler called as Next calls it: a real Request with the bearer
 * token (and a JSON body when given), its params as a promise; the status
 * and the parsed body back.
 */
type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

export async function callRoute(
  handler: unknown,
  method: string,
  path: string,
  options: { token: string; body?: unknown; params?: Record<string, string>; headers?: Record<string, string> },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { Authorization: `Bearer ${options.token}`, ...options.headers };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const request = new Request(`http://localhost${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const response = await (handler as Handler)(request, { params: Promise.resolve(options.params ?? {}) });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/**
 * Points the process-wide database handle (lib/db/client.ts) at a test
 * database with its tenants, as the route handlers read it; `undefined`
 * puts it back.
 */
export function serveRoutesFrom(
  t: Pick<TestDatabase, "db" | "forTenant" | "platformDb" | "adapterFactory" | "listenForChanges"> | undefined,
) {
  (globalThis as unknown as { verityDb?: DatabaseHandle }).verityDb = t && {
    db: t.db,
    forTenant: t.forTenant,
    platformDb: t.platformDb,
    adapterFactory: t.adapterFactory,
    listenForChanges: t.listenForChanges,
    close: async () => {},
  };
}
