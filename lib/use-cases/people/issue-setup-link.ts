import type { Db } from "@/lib/db/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { issueSetupToken, type IssuedSetupToken } from "@/lib/stores/setup-tokens";

/**
 * An hour: long enough to open the link the start printed, short enough that
 * a line left in a log is worth nothing by the time someone reads it. A
 * start finding no accounts prints a fresh link each time.
 */
export const SETUP_LINK_TTL_MS = 60 * 60 * 1000;

/** A one-time link for the first admin, with its audit entry (never the token itself). */
export async function issueSetupLink(db: Db, actor: AuditActor, now = new Date()): Promise<IssuedSetupToken> {
  return db.$transaction(async (tx) => {
    const issued = await issueSetupToken(tx, { now, ttlMs: SETUP_LINK_TTL_MS });
    await appendAuditEntry(tx, {
      action: "setup.link_issued",
      actor,
      subject: { type: "setup_token", id: issued.id },
      at: now,
      details: { expires_at: issued.expiresAt.toISOString() },
    });
    return issued;
  });
}
