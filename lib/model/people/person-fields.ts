import { z } from "zod";

/**
 * What a person is made of, as the console, the CLI and the setup page
 * parse it. The username becomes the person's SPIFFE identity
 * (`spiffe://verity.local/user/<username>`) in every audit entry, so it is
 * restricted to what reads unambiguously in a URL path and a log line.
 */

/** The roles a person may hold; `agent` belongs to tokens. */
export const personRoles = ["operator", "auditor", "engineer", "admin"] as const;
export type PersonRole = (typeof personRoles)[number];

export const UsernameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,63}$/,
    "1-64 characters: lower-case letters, digits, . _ - (starting with a letter or digit)",
  );

export const DisplayNameSchema = z
  .string()
  .trim()
  .min(1, "Give the name people see in the console.")
  .max(100, "At most 100 characters.");

/** Length is what matters (NIST SP 800-63B); the sign-in form accepts up to 1024. */
export const PasswordSchema = z.string().min(12, "At least 12 characters.").max(1024, "At most 1024 characters.");

export const PersonRoleSchema = z.enum(personRoles, {
  error: `One of ${personRoles.join(", ")}.`,
});

export const NewPersonSchema = z.strictObject({
  username: UsernameSchema,
  display_name: DisplayNameSchema,
  role: PersonRoleSchema,
  /** Omitted: an initial password is generated and shown once. */
  password: PasswordSchema.optional(),
});
export type NewPerson = z.input<typeof NewPersonSchema>;

export const FirstAdminSchema = z.strictObject({
  token: z.string().min(1, "The setup link is incomplete: open the link the start printed."),
  username: UsernameSchema,
  display_name: DisplayNameSchema,
  password: PasswordSchema,
});
export type FirstAdmin = z.input<typeof FirstAdminSchema>;
