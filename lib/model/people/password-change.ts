import { z } from "zod";
import { PasswordSchema } from "@/lib/model/people/person-fields";

/**
 * A person's change of their own password, as the /account form sends it.
 * Every rule here is judged without the stored hash, so a refused form costs
 * no scrypt and counts nothing against the sign-in throttle; whether the
 * current password is right is the use case's (lib/use-cases/people/change-own-password.ts).
 */
export const PasswordChangeSchema = z.strictObject({
  current_password: z.string().min(1, "Type your current password.").max(1024, "At most 1024 characters."),
  new_password: PasswordSchema,
  confirm_password: z.string().max(1024, "At most 1024 characters."),
});
export type PasswordChange = z.input<typeof PasswordChangeSchema>;

export type PasswordChangeField = keyof PasswordChange;

/**
 * The rules that compare the fields with each other and with the username:
 * a new password that is the username, or the one it replaces, protects
 * nothing. The username is compared without case, as people type it.
 */
export function passwordChangeProblems(
  input: z.output<typeof PasswordChangeSchema>,
  username: string,
): Array<{ field: PasswordChangeField; message: string }> {
  const problems: Array<{ field: PasswordChangeField; message: string }> = [];
  if (input.new_password.trim().toLowerCase() === username.toLowerCase())
    problems.push({ field: "new_password", message: "Must not be your username." });
  else if (input.new_password === input.current_password)
    problems.push({ field: "new_password", message: "Must differ from your current password." });
  if (input.confirm_password !== input.new_password)
    problems.push({ field: "confirm_password", message: "Does not match the new password: type it again." });
  return problems;
}
