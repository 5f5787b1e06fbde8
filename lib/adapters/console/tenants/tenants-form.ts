/**
 * What the tenants page's server actions answer (no server imports, shared
 * with the forms). An onboarded tenant's first admin's initial password
 * travels only in this answer: shown once, stored only as its hash.
 */
export type TenantsFormState =
  | { status: "idle" }
  | { status: "done"; message: string; initialPassword?: string }
  | { status: "conflict"; message: string }
  | { status: "error"; message: string };

export const idleTenantsForm: TenantsFormState = { status: "idle" };
