import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { setTenantStatus, type TenantView } from "@/lib/stores/tenants";

/**
 * A platform admin suspends or reactivates a tenant from the console. Their
 * own tenant cannot be suspended this way: the suspension would refuse them
 * on their next request, with nobody left in the console to reactivate it (the
 * CLI on the server's host still can).
 */
export async function changeTenantStatus(
  platformDb: Db,
  input: { tenantId: string; status: "active" | "suspended"; reason: string },
  by: Principal,
): Promise<TenantView> {
  if (input.status === "suspended" && input.tenantId === by.tenantId)
    throw new AppError(
      "invariant_violated",
      `You cannot suspend your own tenant (${by.tenantId}): you, and everyone signed in to it, would be refused at once, with nobody left to reactivate it here. Use the CLI on the server's host (verity tenants suspend).`,
      { violations: [{ invariant: "not_own_tenant", message: "A platform admin does not suspend their own tenant." }] },
    );
  return setTenantStatus(platformDb, input.tenantId, input.status, input.reason, actorOf(by));
}
