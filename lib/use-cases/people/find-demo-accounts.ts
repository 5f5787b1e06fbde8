import { sha256Hex } from "@/lib/core/canonical-json";
import { verifyPassword } from "@/lib/core/passwords";
import type { Db, Tx } from "@/lib/db/client";
import { demoAgent, demoObserver, demoUsers } from "@/lib/config/demo-accounts";
import { findPasswordHashes } from "@/lib/stores/users";

export interface DemoAccounts {
  /** Demo people whose password is still the public demo one. */
  users: Array<{ id: string; username: string }>;
  /** Unrevoked demo agent tokens (their plaintext is in the README). */
  tokens: Array<{ id: string; name: string }>;
}

const demoTokens = [demoAgent, demoObserver].map((t) => ({ tokenHash: sha256Hex(t.token) }));

/**
 * The demo accounts in a database: what anyone who read the README can sign
 * in or call the API with. A person named like a demo account whose password
 * is their own is not one (a real deployment may well have an `admin`).
 */
export async function findDemoAccounts(db: Db | Tx): Promise<DemoAccounts> {
  const rows = await findPasswordHashes(
    db,
    demoUsers.map((u) => u.username),
  );
  const users: DemoAccounts["users"] = [];
  for (const row of rows) {
    const demo = demoUsers.find((u) => u.username === row.username)!;
    if (await verifyPassword(demo.password, row.passwordHash)) users.push({ id: row.id, username: row.username });
  }
  // A read by hash only; revoking is lib/stores/api-tokens.ts's (purge-demo-accounts.ts).
  const tokens = await db.apiToken.findMany({
    where: { tokenHash: { in: demoTokens.map((t) => t.tokenHash) }, revokedAt: null },
    select: { id: true, name: true },
    orderBy: { name: "asc" },
  });
  return { users, tokens };
}

export function hasDemoAccounts(found: DemoAccounts): boolean {
  return found.users.length > 0 || found.tokens.length > 0;
}
