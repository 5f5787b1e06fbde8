/**
 * What the retention page's server actions answer (no server imports, shared
 * with the forms). Every answer says in words what happened, or what was
 * wrong and with which field.
 */
export type RetentionFormState =
  | { status: "idle" }
  | { status: "done"; message: string }
  | { status: "conflict"; message: string }
  | { status: "error"; message: string; fields: Record<string, string> };

export const idleRetentionForm: RetentionFormState = { status: "idle" };
