import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import { assertTenantId } from "@/lib/db/tenant-sessions";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { NewPersonSchema } from "@/lib/model/people/person-fields";
import { findTenant, type TenantView } from "@/lib/stores/tenants";
import { countPeople, tenantOfUsername, type PersonRow } from "@/lib/stores/users";
import { createPerson } from "@/lib/use-cases/people/create-person";
import { openTenant } from "@/lib/use-cases/tenants/open-tenant";

export interface TenantOnboarding {
  id: string;
  name: string;
  admin: { username: string; display_name: string };
}

/**
 * A platform admin's onboarding of a tenant, end to end: the tenant (with the
 * built-in workflows and tools, lib/use-cases/tenants/open-tenant.ts) and its
 * first admin, who signs in with the initial password returned here (shown
 * once, stored only as its hash) and must replace it at once. That admin then
 * manages the tenant's own people and agents; nobody else's.
 *
 * Every field is judged before anything is written, so bad input changes
 * nothing. The tenant and its admin are written on two connections (the
 * platform's, then the tenant's), so a refusal between the two (a username
 * taken meanwhile) leaves a tenant with nobody in it; submitting again with the
 * same id completes it with its first admin, which is allowed only while the
 * tenant has no people.
 */
export async function onboardTenant(
  databases: { platformDb: Db; forTenant(tenantId: string): Db },
  input: TenantOnboarding,
  actor: AuditActor,
): Promise<{ tenant: TenantView; admin: PersonRow; initialPassword: string; resumed: boolean }> {
  const id = assertTenantId(input.id.trim());
  const admin = parseOrThrow(NewPersonSchema, { ...input.admin, role: "admin" });
  if (await tenantOfUsername(databases.platformDb, admin.username))
    throw new AppError("validation_failed", `username: "${admin.username}" is taken.`, {
      errors: [{ field: "username", message: `"${admin.username}" is taken` }],
    });
  const existing = await findTenant(databases.platformDb, id);
  if (existing && (await countPeople(databases.forTenant(id))) > 0)
    throw new AppError("validation_failed", `A tenant with the id ${id} exists already.`, {
      errors: [{ field: "tenant_id", message: "is taken by another tenant" }],
    });
  const tenant = existing ?? (await openTenant(databases, { id, name: input.name }, actor));
  const created = await createPerson(
    databases.forTenant(id),
    { username: admin.username, display_name: admin.display_name, role: "admin" },
    actor,
    "console",
  );
  return { tenant, admin: created.person, initialPassword: created.initialPassword!, resumed: existing !== null };
}
