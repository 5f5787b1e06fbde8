import type { Db, Tx } from "@/lib/db/client";
import { hashPassword, unusablePasswordHash, verifyPassword } from "@/lib/core/passwords";
import { passwordScryptN } from "@/lib/config/env";
import { userIdentity, type Principal, type Role } from "@/lib/model/permissions";
import { newId } from "@/lib/core/ids";

/** The owner of the `users` table. */

export async function createUser(
  db: Db | Tx,
  input: {
    username: string;
    displayName: string;
    role: Role;
    password: string;
    /** A one-time password someone handed over: the person must choose their own before anything else. */
    passwordMustChange?: boolean;
    /** Only the first tenant's setup and the demo's seed create one (docs/tenants.md); the CLI grants it later. */
    platformAdmin?: boolean;
  },
): Promise<Principal> {
  const row = await db.user.create({
    data: {
      id: newId("usr"),
      username: input.username,
      displayName: input.displayName,
      role: input.role,
      passwordHash: await hashPassword(input.password, passwordScryptN()),
      passwordMustChange: input.passwordMustChange ?? false,
      platformAdmin: input.platformAdmin ?? false,
    },
  });
  return principalOfRow(row);
}

export type SignInCandidate = { principal: Principal; sessionVersion: number; passwordHash: string };

/**
 * Which tenant a login name belongs to, null for none: login names are
 * unique across tenants, so a sign-in finds its tenant before anything else.
 * Run on the platform's connection (row-level security would show a tenant
 * its own people only).
 */
export async function tenantOfUsername(platformDb: Db, username: string): Promise<string | null> {
  const row = await platformDb.user.findUnique({ where: { username }, select: { tenantId: true } });
  return row?.tenantId ?? null;
}

/** Which tenant the person a single sign-on subject is linked to belongs to (platform's connection), null for none yet. */
export async function tenantOfOidcSubject(platformDb: Db, subject: string): Promise<string | null> {
  const row = await platformDb.user.findUnique({ where: { oidcSubject: subject }, select: { tenantId: true } });
  return row?.tenantId ?? null;
}

/**
 * The person for a correct username and password, null otherwise (same cost
 * either way); a disabled person is refused like a wrong password.
 */
export async function verifyUserCredentials(
  db: Db,
  username: string,
  password: string,
): Promise<SignInCandidate | null> {
  const row = await db.user.findUnique({ where: { username } });
  const ok = await verifyPassword(password, row?.passwordHash ?? unusablePasswordHash(passwordScryptN()));
  if (!row || !ok || row.disabledAt) return null;
  return { principal: principalOfRow(row), sessionVersion: row.sessionVersion, passwordHash: row.passwordHash };
}

/**
 * Replaces a hash made with weaker parameters after a successful sign-in
 * proved the password. Guarded on the old hash: a password changed meanwhile
 * is not overwritten. Not a password change, so sessions stay.
 */
export async function replaceWeakPasswordHash(
  tx: Db | Tx,
  userId: string,
  previousHash: string,
  passwordHash: string,
): Promise<boolean> {
  const { count } = await tx.user.updateMany({
    where: { id: userId, passwordHash: previousHash },
    data: { passwordHash, updatedAt: new Date() },
  });
  return count === 1;
}

function principalOfRow(row: {
  id: string;
  username: string;
  role: Role;
  displayName: string;
  tenantId: string;
  platformAdmin: boolean;
}): Principal {
  return {
    kind: "user",
    id: row.id,
    identity: userIdentity(row.username),
    role: row.role,
    displayName: row.displayName,
    tenantId: row.tenantId,
    platformAdmin: row.platformAdmin,
  };
}

// People management (lib/use-cases/people/). Every change to who may act —
// role, disabled — bumps session_version in the same statement: a sign-in
// whose password was checked before the change cannot open its session after
// it (lib/stores/console-sessions.ts openConsoleSession). The sessions
// already open are ended by the use case, in the same transaction.

/** A person as the console and the CLI list them; never the password hash. */
export interface PersonRow {
  id: string;
  username: string;
  displayName: string;
  role: Role;
  disabledAt: Date | null;
  createdAt: Date;
  sessionVersion: number;
  /** Their password is a one-time one they have not replaced yet. */
  passwordMustChange: boolean;
  /** False for a person who signs in only through single sign-on: there is no password to change or reset. */
  hasPassword: boolean;
}

const personColumns = {
  id: true,
  username: true,
  displayName: true,
  role: true,
  disabledAt: true,
  createdAt: true,
  sessionVersion: true,
  passwordMustChange: true,
  passwordHash: true,
} as const;

type PersonColumns = Omit<PersonRow, "hasPassword"> & { passwordHash: string };

/** The hash itself never leaves this module with a person: only whether there is one. */
function personOfRow({ passwordHash, ...row }: PersonColumns): PersonRow {
  return { ...row, hasPassword: isPasswordHash(passwordHash) };
}

/** A single sign-on account stores a marker no password verifies against (linkOidcUser), not a scrypt hash. */
function isPasswordHash(stored: string): boolean {
  return stored.startsWith("scrypt$");
}

export async function listPeople(db: Db | Tx): Promise<PersonRow[]> {
  const rows = await db.user.findMany({ select: personColumns, orderBy: { username: "asc" } });
  return rows.map(personOfRow);
}

export async function getPerson(db: Db | Tx, where: { id: string } | { username: string }): Promise<PersonRow | null> {
  const row = await db.user.findUnique({ where, select: personColumns });
  return row ? personOfRow(row) : null;
}

/** The stored hash (for verifying a person's current password); never shown anywhere. */
export async function readPasswordHash(db: Db | Tx, userId: string): Promise<string | null> {
  const row = await db.user.findUnique({ where: { id: userId }, select: { passwordHash: true } });
  return row?.passwordHash ?? null;
}

/**
 * A new password, guarded on the hash it replaces when `previousHash` is
 * given (a person's own change, verified against it: a change made meanwhile
 * is not overwritten, null). Bumps session_version like every change to who
 * may act: a sign-in that checked the old password cannot open its session
 * after this. `mustChange` marks a one-time password an admin issued.
 */
export async function setUserPassword(
  tx: Db | Tx,
  userId: string,
  input: { previousHash: string | null; passwordHash: string; mustChange: boolean },
): Promise<PersonRow | null> {
  const { count } = await tx.user.updateMany({
    where: { id: userId, ...(input.previousHash === null ? {} : { passwordHash: input.previousHash }) },
    data: {
      passwordHash: input.passwordHash,
      passwordMustChange: input.mustChange,
      sessionVersion: { increment: 1 },
      updatedAt: new Date(),
    },
  });
  return count === 1 ? getPerson(tx, { id: userId }) : null;
}

export async function countPeople(db: Db | Tx): Promise<number> {
  return db.user.count();
}

/**
 * Locks the enabled admins' rows for the rest of the transaction and returns
 * their ids: two admins demoting or disabling each other at once must not
 * both succeed and leave nobody who can manage people.
 */
export async function lockEnabledAdmins(tx: Tx): Promise<string[]> {
  const rows = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM users WHERE role = 'admin' AND disabled_at IS NULL ORDER BY id FOR UPDATE`;
  return rows.map((r) => r.id);
}

/** Sets the role; null when the person does not exist or already has it. */
export async function setUserRole(tx: Db | Tx, userId: string, role: Role): Promise<PersonRow | null> {
  const { count } = await tx.user.updateMany({
    where: { id: userId, role: { not: role } },
    data: { role, sessionVersion: { increment: 1 }, updatedAt: new Date() },
  });
  return count === 1 ? getPerson(tx, { id: userId }) : null;
}

/** Disables (at `at`) or enables (null); null when nothing changed (unknown, or already so). */
export async function setUserDisabled(tx: Db | Tx, userId: string, at: Date | null): Promise<PersonRow | null> {
  const { count } = await tx.user.updateMany({
    where: { id: userId, disabledAt: at ? null : { not: null } },
    data: { disabledAt: at, sessionVersion: { increment: 1 }, updatedAt: new Date() },
  });
  return count === 1 ? getPerson(tx, { id: userId }) : null;
}

/** The rows with these usernames and their password hashes: the demo-account check verifies the public passwords. */
export async function findPasswordHashes(
  db: Db | Tx,
  usernames: readonly string[],
): Promise<Array<{ id: string; username: string; passwordHash: string }>> {
  return db.user.findMany({
    where: { username: { in: [...usernames] } },
    select: { id: true, username: true, passwordHash: true },
  });
}

/** Removes people (the demo accounts' purge): history keeps their identity strings, nothing references the rows. */
export async function deleteUsers(tx: Tx, ids: readonly string[]): Promise<number> {
  const { count } = await tx.user.deleteMany({ where: { id: { in: [...ids] } } });
  return count;
}

/**
 * The person behind a single sign-on subject: found by `oidc_subject`, or
 * created with the mapped role (no usable password: the stored hash is not
 * a scrypt hash, so no password verifies). Null for a disabled person. A
 * mapped role that changed since the last sign-in is applied (`roleChanged`:
 * the caller ends the person's other sessions, as for any role change). The username is the
 * provider's, suffixed when another account already holds it: a single
 * sign-on never takes over an existing account by its name.
 */
export async function linkOidcUser(
  tx: Tx,
  input: { subject: string; username: string; displayName: string; role: Role },
): Promise<{ principal: Principal; sessionVersion: number; created: boolean; roleChanged: boolean } | null> {
  const existing = await tx.user.findUnique({ where: { oidcSubject: input.subject } });
  if (existing?.disabledAt) return null;
  if (existing) {
    const row =
      existing.role === input.role
        ? existing
        : await tx.user.update({
            where: { id: existing.id },
            data: { role: input.role, sessionVersion: { increment: 1 }, updatedAt: new Date() },
          });
    return {
      principal: principalOfRow(row),
      sessionVersion: row.sessionVersion,
      created: false,
      roleChanged: row !== existing,
    };
  }
  let username = input.username;
  for (let n = 2; await tx.user.findUnique({ where: { username } }); n++) username = `${input.username}-${n}`;
  const row = await tx.user.create({
    data: {
      id: newId("usr"),
      username,
      displayName: input.displayName,
      role: input.role,
      passwordHash: "oidc-only",
      oidcSubject: input.subject,
    },
  });
  return { principal: principalOfRow(row), sessionVersion: row.sessionVersion, created: true, roleChanged: false };
}

/** A person as the platform's commands find them: on the owner's connection, any tenant's. */
export async function findPersonAnyTenant(
  platformDb: Db | Tx,
  username: string,
): Promise<(PersonRow & { tenantId: string; platformAdmin: boolean }) | null> {
  const row = await platformDb.user.findUnique({
    where: { username },
    select: { ...personColumns, tenantId: true, platformAdmin: true },
  });
  if (!row) return null;
  const { tenantId, platformAdmin, ...person } = row;
  return { ...personOfRow(person), tenantId, platformAdmin };
}

/**
 * Grants or withdraws platform admin (users.platform_admin); false when it was
 * so already. Not a change of role: sessions stay, and every request reads
 * the flag afresh (readConsoleSession), so a withdrawal holds at the next one.
 */
export async function setUserPlatformAdmin(tx: Db | Tx, userId: string, platformAdmin: boolean): Promise<boolean> {
  const { count } = await tx.user.updateMany({
    where: { id: userId, platformAdmin: !platformAdmin },
    data: { platformAdmin, updatedAt: new Date() },
  });
  return count === 1;
}

/** How many people each tenant has (owner's connection): the register shows a tenant still waiting for its first admin. */
export async function countPeopleByTenant(platformDb: Db): Promise<Map<string, number>> {
  const rows = await platformDb.user.groupBy({ by: ["tenantId"], _count: { _all: true } });
  return new Map(rows.map((r) => [r.tenantId, r._count._all]));
}
