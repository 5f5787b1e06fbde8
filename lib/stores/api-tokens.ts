import { randomBytes } from "node:crypto";
import { sha256Hex } from "@/lib/core/canonical-json";
import type { Db } from "@/lib/db/client";
import type { Principal, Role } from "@/lib/model/permissions";
import { newId } from "@/lib/core/ids";

/**
 * The owner of the `api_tokens` table. Tokens carry 256 bits of randomness,
 * so a plain sha256 is enough to store them: the plaintext is shown once and
 * never kept.
 */
export async function issueApiToken(
  db: Db,
  input: { name: string; identity: string; role?: Role; token?: string },
): Promise<{ token: string; id: string }> {
  const token = input.token ?? `vrt_${randomBytes(32).toString("base64url")}`;
  const row = await db.apiToken.create({
    data: {
      id: newId("tok"),
      name: input.name,
      identity: input.identity,
      role: input.role ?? "agent",
      tokenHash: sha256Hex(token),
      tokenPrefix: token.slice(0, 8),
    },
  });
  return { token, id: row.id };
}

export async function authenticateApiToken(db: Db, token: string): Promise<Principal | null> {
  const row = await db.apiToken.findUnique({ where: { tokenHash: sha256Hex(token) } });
  if (!row || row.revokedAt) return null;
  return { kind: "agent", id: row.id, identity: row.identity, role: row.role, displayName: row.name };
}
