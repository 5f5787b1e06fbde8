import type { Metadata } from "next";
import { authorizePage } from "@/lib/adapters/auth/session";
import { getPlatformDb } from "@/lib/db/client";
import { listTenants } from "@/lib/stores/tenants";
import { countPeopleByTenant } from "@/lib/stores/users";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { TenantsView } from "@/components/tenants/tenants-view";

export const metadata: Metadata = { title: "Tenants" };

/** The register of tenants, read on the platform's connection: only after the caller is found a platform admin. */
export default async function TenantsPage() {
  const access = await authorizePage("tenants:manage", "/platform/tenants");
  if (!access.ok)
    return (
      <ForbiddenNotice
        reason={`${access.reason} A tenant's admins manage its people and agents under People and Agents.`}
      />
    );
  const platformDb = getPlatformDb();
  const [tenants, people] = await Promise.all([listTenants(platformDb), countPeopleByTenant(platformDb)]);
  return (
    <TenantsView
      tenants={tenants.map((t) => ({ ...t, people: people.get(t.id) ?? 0 }))}
      ownTenantId={access.principal.tenantId}
    />
  );
}
