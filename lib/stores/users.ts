import type { Db } from "@/lib/db/client";
import { hashPassword, unusablePasswordHash, verifyPassword } from "@/lib/core/passwords";
import { userIdentity, type Principal, type Role } from "@/lib/model/permissions";
import { newId } from "@/lib/core/ids";

/** The owner of the `users` table. */

export async function createUser(
  db: Db,
  input: { username: string; displayName: string; role: Role; password: string },
): Promise<Principal> {
  const row = await db.user.create({
    data: {
      id: newId("usr"),
      username: input.username,
      displayName: input.displayName,
      role: input.role,
      passwordHash: await hashPassword(input.password),
    },
  });
  return {
    kind: "user",
    id: row.id,
    identity: userIdentity(row.username),
    role: row.role,
    displayName: row.displayName,
  };
}

/** The principal for a correct username and password, null otherwise (same cost either way). */
export async function verifyUserCredentials(db: Db, username: string, password: string): Promise<Principal | null> {
  const row = await db.user.findUnique({ where: { username } });
  const ok = await verifyPassword(password, row?.passwordHash ?? unusablePasswordHash);
  if (!row || !ok) return null;
  return {
    kind: "user",
    id: row.id,
    identity: userIdentity(row.username),
    role: row.role,
    displayName: row.displayName,
  };
}

/** Re-reads a signed-in user, so a deleted user or a changed role takes effect at once. */
export async function getUserPrincipal(db: Db, userId: string): Promise<Principal | null> {
  const row = await db.user.findUnique({ where: { id: userId } });
  return row
    ? { kind: "user", id: row.id, identity: userIdentity(row.username), role: row.role, displayName: row.displayName }
    : null;
}
