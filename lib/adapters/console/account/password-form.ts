import type { AppError } from "@/lib/core/errors";
import type { PasswordChangeField } from "@/lib/model/people/password-change";

/**
 * What the account page's change of password answers (no server imports,
 * shared with the form). Field errors are keyed by the form's field names,
 * so each message sits under the box it is about.
 */
export type PasswordFormState =
  | { status: "idle" }
  | { status: "done"; message: string }
  | { status: "error"; message: string; fields: Partial<Record<PasswordChangeField, string>> };

export const idlePasswordForm: PasswordFormState = { status: "idle" };

const fieldNames: readonly PasswordChangeField[] = ["current_password", "new_password", "confirm_password"];

/** An AppError as the form shows it: the message above, and each named field's words under its box. */
export function passwordFormError(error: Pick<AppError, "message" | "details">): PasswordFormState {
  const fields: Partial<Record<PasswordChangeField, string>> = {};
  for (const e of error.details.errors ?? []) {
    const field = fieldNames.find((f) => f === e.field);
    if (field && !fields[field]) fields[field] = e.message;
  }
  const labelled = Object.keys(fields).length > 0;
  return {
    status: "error",
    message: labelled ? "Nothing was changed: see the fields marked below." : `${error.message} Nothing was changed.`,
    fields,
  };
}
