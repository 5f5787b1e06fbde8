"use server";

import { z } from "zod";
import type { FormAction, FormActionSpec } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import type { AppError } from "@/lib/core/errors";
import type { TenantsFormState } from "@/lib/adapters/console/tenants/tenants-form";
import { dbFor, getPlatformDb } from "@/lib/db/client";
import { changeTenantStatus } from "@/lib/use-cases/tenants/change-tenant-status";
import { onboardTenant } from "@/lib/use-cases/tenants/onboard-tenant";

/**
 * The platform's writes from /platform/tenants. Each checks tenants:manage
 * itself (a platform admin's flag, re-read from the database on every call;
 * the page showing a form proves nothing about who submits it), then runs on
 * the platform's connection, the only one that reaches the register; the
 * use cases judge the fields and audit each change in the tenant's own chain.
 */

const tenantsForm = {
  permission: "tenants:manage",
  // The standard refusals (session ended, not allowed) say themselves that nothing was changed.
  errorState: (message: string, error?: AppError): TenantsFormState => {
    const judged = error && ["validation_failed", "invariant_violated", "not_found"].includes(error.code);
    return { status: "error", message: judged ? `Nothing was changed: ${message}` : message };
  },
} satisfies Partial<FormActionSpec<z.ZodType, TenantsFormState>>;

const platformDatabases = () => ({ platformDb: getPlatformDb(), forTenant: (tenantId: string) => dbFor({ tenantId }) });

const OnboardTenantFormSchema = z.object({
  tenantId: z.string().default(""),
  name: z.string().default(""),
  adminUsername: z.string().default(""),
  adminDisplayName: z.string().default(""),
});

export const onboardTenantAction: FormAction<TenantsFormState> = sessionFormAction({
  ...tenantsForm,
  name: "onboardTenantAction",
  schema: OnboardTenantFormSchema,
  async run({ tenantId, name, adminUsername, adminDisplayName }, { actor }) {
    const { tenant, admin, initialPassword, resumed } = await onboardTenant(
      platformDatabases(),
      { id: tenantId, name, admin: { username: adminUsername, display_name: adminDisplayName } },
      actor,
    );
    return {
      status: "done",
      message: `${resumed ? `Tenant ${tenant.id} existed without anyone in it; it` : `Tenant ${tenant.id} (${tenant.name}) is open, with the built-in workflows and tools, and it`} has its first admin: ${admin.displayName} (${admin.username}) signs in with this initial password and must then choose their own. It is shown only now: hand it over privately.`,
      initialPassword,
    };
  },
});

const TenantStatusFormSchema = z.object({
  tenantId: z.string().min(1),
  reason: z.string().default(""),
});

export const suspendTenantAction: FormAction<TenantsFormState> = sessionFormAction({
  ...tenantsForm,
  name: "suspendTenantAction",
  schema: TenantStatusFormSchema,
  async run({ tenantId, reason }, { principal }) {
    const tenant = await changeTenantStatus(getPlatformDb(), { tenantId, status: "suspended", reason }, principal);
    return {
      status: "done",
      message: `Tenant ${tenant.id} is suspended: its people and agents are refused everything, its background work stops.`,
    };
  },
});

export const reactivateTenantAction: FormAction<TenantsFormState> = sessionFormAction({
  ...tenantsForm,
  name: "reactivateTenantAction",
  schema: TenantStatusFormSchema,
  async run({ tenantId, reason }, { principal }) {
    const tenant = await changeTenantStatus(getPlatformDb(), { tenantId, status: "active", reason }, principal);
    return { status: "done", message: `Tenant ${tenant.id} is active again: its people and agents are served.` };
  },
});
