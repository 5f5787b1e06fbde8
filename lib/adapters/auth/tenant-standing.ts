import { getPlatformDb } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Principal } from "@/lib/model/permissions";
import { findTenant } from "@/lib/stores/tenants";

/**
 * The caller's tenant must be active: a suspended tenant's people and agents
 * are refused everything (403, in words), and their credentials stay as they
 * are for when it is reactivated. Read on the platform's connection, once per
 * request.
 */
export async function requireActiveTenant(principal: Principal): Promise<Principal> {
  const tenant = await findTenant(getPlatformDb(), principal.tenantId);
  return requireTenantStatusActive(principal, tenant?.status ?? null);
}

/** The same refusal, for a caller that read the tenant's status with its credential (an API token, in one statement). */
export function requireTenantStatusActive(principal: Principal, status: string | null): Principal {
  if (status !== "active")
    throw new AppError(
      "forbidden",
      status === null || status === "deleted"
        ? "Your organisation's tenant no longer exists."
        : `Your organisation's tenant (${principal.tenantId}) is suspended: nothing can be read or changed until a platform administrator reactivates it.`,
    );
  return principal;
}
