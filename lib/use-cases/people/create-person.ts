import { randomBytes } from "node:crypto";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { personAuditEntry } from "@/lib/model/audit/audit-events";
import { NewPersonSchema, type NewPerson } from "@/lib/model/people/person-fields";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { createUser, getPerson, type PersonRow } from "@/lib/stores/users";

/** How the person came to be, recorded with them: the console, the CLI. */
export type CreatedVia = "console" | "cli";

/**
 * Creates a person with a password: the one given, or an initial one
 * generated here and returned once (shown to the admin, stored only as its
 * scrypt hash) for the admin to hand over, which the person must replace at
 * their first sign-in (password_must_change). With the audit entry in the
 * same transaction. A taken username is a 400 naming the field.
 */
export async function createPerson(
  db: Db,
  raw: NewPerson,
  actor: AuditActor,
  via: CreatedVia,
): Promise<{ person: PersonRow; initialPassword: string | null }> {
  const input = parseOrThrow(NewPersonSchema, raw);
  const initialPassword = input.password === undefined ? generateInitialPassword() : null;
  try {
    const person = await db.$transaction(async (tx) => {
      const created = await createUser(tx, {
        username: input.username,
        displayName: input.display_name,
        role: input.role,
        password: input.password ?? initialPassword!,
        // Someone else read a generated password: only the person's own choice may stay.
        passwordMustChange: initialPassword !== null,
      });
      const row = (await getPerson(tx, { id: created.id }))!;
      await appendAuditEntry(
        tx,
        personAuditEntry("user.created", row, actor, {
          display_name: row.displayName,
          via,
          password: initialPassword ? "generated" : "chosen",
        }),
      );
      return row;
    });
    return { person, initialPassword };
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("validation_failed", `username: "${input.username}" is taken.`, {
        errors: [{ field: "username", message: `"${input.username}" is taken` }],
      });
    throw error;
  }
}

/** 20 characters of base64url: 120 bits, typed once and then changed (created here, or reset: reset-person-password.ts). */
export function generateInitialPassword(): string {
  return randomBytes(15).toString("base64url");
}
