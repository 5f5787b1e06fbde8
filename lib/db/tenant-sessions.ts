import type { PGlite } from "@electric-sql/pglite";
import { AppError } from "@/lib/core/errors";

/**
 * How a database connection is tied to one tenant (docs/tenants.md).
 *
 * The application's statements run as the role `verity_app`, which
 * row-level security holds to the rows whose tenant_id is the connection's
 * `verity.tenant_id` (prisma/migrations/…_tenants_row_level_security). The
 * owner's connection (migrations, the platform's lookups) is not.
 *
 * - **PostgreSQL**: one node-postgres pool per tenant whose connections are
 *   opened with the startup options `-c role=verity_app -c
 *   verity.tenant_id=<id>`: the server sets both before the first statement,
 *   for the connection's whole life, at no cost per statement.
 * - **The embedded database** has one connection, shared by every tenant
 *   and by the owner. Each statement and each transaction of a tenant's
 *   client runs after the session has been switched to that tenant's role
 *   and setting (only when the previous one was someone else's), under one
 *   queue, so nothing of another tenant's runs in between.
 */

/** The role the application's statements run as; see the migration that creates it. */
export const APP_ROLE = "verity_app";

/** The tenant that everything before tenants belongs to, and the demo's. */
export const DEFAULT_TENANT_ID = "default";

const tenantIdPattern = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function isTenantId(value: string): boolean {
  return tenantIdPattern.test(value);
}

/** A tenant id is spliced into connection options: only the register's format ever gets there. */
export function assertTenantId(value: string): string {
  if (!isTenantId(value))
    throw new AppError("validation_failed", "A tenant id is 1–63 lowercase letters, digits and dashes.", {
      errors: [{ field: "tenant_id", message: "must match ^[a-z0-9][a-z0-9-]{0,62}$" }],
    });
  return value;
}

/** node-postgres `options` for a pool whose every connection is the tenant's. */
export function tenantConnectionOptions(tenantId: string): string {
  return `-c role=${APP_ROLE} -c verity.tenant_id=${assertTenantId(tenantId)}`;
}

/** What pglite-prisma-adapter (and our raw helpers) call on a PGlite. */
export type PgliteSession = Pick<PGlite, "query" | "exec" | "transaction">;

export interface ScopedPglite {
  /** The owner's session: not subject to row-level security. */
  owner: PgliteSession;
  /** A session whose statements see and write only `tenantId`'s rows. */
  tenant(tenantId: string): PgliteSession;
  /**
   * LISTEN on the one session, in the queue like every statement (never
   * between a tenant switch and its work, nor inside a transaction).
   * Notifications are delivered whoever's statement committed them.
   */
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

type Scope = { kind: "owner" } | { kind: "tenant"; tenantId: string };

const scopes = new WeakMap<PGlite, ScopedPglite>();

/** The scoped sessions of one PGlite (one set per instance, so all share one queue). */
export function scopedPglite(pglite: PGlite): ScopedPglite {
  let scoped = scopes.get(pglite);
  if (!scoped) {
    scoped = buildScopedPglite(pglite);
    scopes.set(pglite, scoped);
  }
  return scoped;
}

function buildScopedPglite(pglite: PGlite): ScopedPglite {
  // What the session is set to now; unknown until the first switch.
  let current: string | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  async function switchTo(scope: Scope): Promise<void> {
    const key = scope.kind === "owner" ? "owner" : `tenant:${scope.tenantId}`;
    if (current === key) return;
    // Outside any transaction (the queue holds no other work), so the
    // session-level settings stay until the next switch.
    current = undefined;
    if (scope.kind === "owner") await pglite.exec("RESET ROLE; SELECT set_config('verity.tenant_id', '', false)");
    else
      await pglite.query(`SELECT set_config('role', '${APP_ROLE}', false), set_config('verity.tenant_id', $1, false)`, [
        scope.tenantId,
      ]);
    current = key;
  }

  function exclusive<T>(scope: Scope, work: () => Promise<T>): Promise<T> {
    const run = queue.then(async () => {
      await switchTo(scope);
      return work();
    });
    queue = run.catch(() => undefined);
    return run;
  }

  function session(scope: Scope): PgliteSession {
    return {
      query: ((text: string, params?: unknown[], options?: unknown) =>
        exclusive(scope, () => pglite.query(text, params, options as never))) as PGlite["query"],
      exec: ((text: string, options?: unknown) =>
        exclusive(scope, () => pglite.exec(text, options as never))) as PGlite["exec"],
      transaction: ((callback: Parameters<PGlite["transaction"]>[0]) =>
        exclusive(scope, () => pglite.transaction(callback))) as PGlite["transaction"],
    };
  }

  const owner = session({ kind: "owner" });
  const tenants = new Map<string, PgliteSession>();
  return {
    owner,
    listen: async (channel, callback) => {
      const unlisten = await exclusive({ kind: "owner" }, () => pglite.listen(channel, callback));
      return () => exclusive({ kind: "owner" }, () => unlisten());
    },
    tenant(tenantId) {
      assertTenantId(tenantId);
      let s = tenants.get(tenantId);
      if (!s) {
        s = session({ kind: "tenant", tenantId });
        tenants.set(tenantId, s);
      }
      return s;
    },
  };
}
