import { randomBytes } from "node:crypto";
import { sha256Hex } from "@/lib/core/canonical-json";
import type { Db, Tx } from "@/lib/db/client";
import { newId } from "@/lib/core/ids";

/**
 * The owner of `setup_tokens`: the one-time links that create the first
 * admin of a deployment with no accounts. A link carries 256 bits of
 * randomness, so its sha256 is all that is stored; the plaintext exists only
 * in the line the start printed.
 */

export interface IssuedSetupToken {
  id: string;
  token: string;
  expiresAt: Date;
}

export async function issueSetupToken(db: Db | Tx, options: { now: Date; ttlMs: number }): Promise<IssuedSetupToken> {
  const token = `vst_${randomBytes(32).toString("base64url")}`;
  const expiresAt = new Date(options.now.getTime() + options.ttlMs);
  const row = await db.setupToken.create({
    data: { id: newId("stp"), tokenHash: sha256Hex(token), createdAt: options.now, expiresAt },
  });
  return { id: row.id, token, expiresAt };
}

/** Whether the link still opens the setup form: known, unused, unexpired. */
export async function isSetupTokenUsable(db: Db | Tx, token: string, now: Date): Promise<boolean> {
  const row = await db.setupToken.findUnique({ where: { tokenHash: sha256Hex(token) } });
  return !!row && row.usedAt === null && row.expiresAt > now;
}

/**
 * Uses the link up, guarded in the statement (unused and unexpired), so two
 * submits of one link cannot both create an admin; its id, or null when it
 * was unknown, used or expired.
 */
export async function consumeSetupToken(tx: Tx, token: string, usedBy: string, now: Date): Promise<string | null> {
  const tokenHash = sha256Hex(token);
  const { count } = await tx.setupToken.updateMany({
    where: { tokenHash, usedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now, usedBy },
  });
  if (count !== 1) return null;
  const row = await tx.setupToken.findUnique({ where: { tokenHash }, select: { id: true } });
  return row?.id ?? null;
}
