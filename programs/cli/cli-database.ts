import { openDatabase, type DatabaseHandle } from "@/lib/db/client";
import { assertTenantId, DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";
import { findTenant } from "@/lib/stores/tenants";
import { ensureEmbeddedDataDir } from "@/lib/db/embedded-init";
import { migrateDatabase } from "@/lib/db/migrate";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { getEnv } from "@/lib/config/env";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { AppError, isAppError } from "@/lib/core/errors";

/**
 * The tenant a command works in: `--tenant <id>` before or after the group
 * (scripts/verity.ts takes it off the arguments), else the first tenant. A
 * command's `db` is that tenant's connection, under row-level security like
 * the server's; the register's own commands (`tenants`) use the owner's.
 */
let commandTenant = DEFAULT_TENANT_ID;

export function selectCommandTenant(tenantId: string): void {
  commandTenant = assertTenantId(tenantId);
}

export function commandTenantId(): string {
  return commandTenant;
}

/**
 * What the people and demo commands share: the configured database, brought
 * to the current schema first (so `users create` works before the first
 * `npm start`), and AppErrors as one line and exit 1. The embedded folder
 * belongs to one process: with the server running on it, these commands
 * cannot open it (stop the server, or use PostgreSQL).
 */
export async function withCliDatabase(work: (handle: DatabaseHandle) => Promise<number>): Promise<number> {
  const { database } = getEnv();
  if (database.kind === "pglite") await ensureEmbeddedDataDir(database.dir);
  const handle = openDatabase(database, { poolSize: 2 });
  try {
    await migrateDatabase(handle.adapterFactory, { log: () => {} });
    await registerBuiltInWorkflows(handle.db);
    if (commandTenant === DEFAULT_TENANT_ID) return await work(handle);
    if (!(await findTenant(handle.platformDb, commandTenant)))
      throw new AppError("not_found", `There is no tenant ${commandTenant} (verity tenants list).`);
    return await work({ ...handle, db: handle.forTenant(commandTenant) });
  } catch (error) {
    if (!isAppError(error)) throw error;
    console.error(`verity: ${error.message}`);
    return 1;
  } finally {
    await handle.close();
  }
}

/** Who the audit log records for a command run on the server's host. */
export const cliActor: AuditActor = { identity: "system:cli", kind: "system" };

/** A usage mistake: the message and the usage, exit 2. */
export class UsageError extends Error {}

export function usageFailure(error: unknown, usage: string): number {
  if (!(error instanceof UsageError || (error instanceof TypeError && "code" in error))) throw error;
  console.error(`verity: ${error.message}\n\n${usage}`);
  return 2;
}

export function requireArg(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}
