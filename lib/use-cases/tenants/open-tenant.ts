import type { Db } from "@/lib/db/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { createTenant, type TenantView } from "@/lib/stores/tenants";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";

/**
 * A new tenant, ready for its people and agents: the register's entry (on the
 * platform's connection, audited in the tenant's own chain), then the shared
 * built-in workflows and tools registered in it, as every start does for the
 * first tenant. Registering is idempotent, so a start that finds the tenant
 * without them (a crash between the two) registers them again.
 */
export async function openTenant(
  databases: { platformDb: Db; forTenant(tenantId: string): Db },
  input: { id: string; name: string },
  actor: AuditActor,
): Promise<TenantView> {
  const tenant = await createTenant(databases.platformDb, input, actor);
  const db = databases.forTenant(tenant.id);
  await registerBuiltInWorkflows(db);
  await registerBuiltInTools(db);
  return tenant;
}
