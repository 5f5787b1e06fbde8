import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { appendAuditEntry } from "@/lib/stores/audit-log";

/**
 * The owner of `inbox_claims`: who has taken which inbox item
 * (docs/inbox.md). A claim is advisory: it tells the others that someone is
 * on it, and grants nothing (every decision still checks the person's
 * permission, four eyes included). Every change is a compare-and-swap on
 * the row's version, audited in the same transaction (`inbox.claimed`,
 * `inbox.unclaimed`); a released claim keeps its row, so its version keeps
 * counting and a page showing an old claim cannot release a newer one.
 */

export interface InboxClaim {
  itemKey: string;
  /** Who holds it (SPIFFE id), or null when released. */
  claimedBy: string | null;
  claimedAt: Date | null;
  /** 0 when the item was never claimed (no row yet). */
  version: number;
}

export function unclaimed(itemKey: string): InboxClaim {
  return { itemKey, claimedBy: null, claimedAt: null, version: 0 };
}

/** The claims of these items, by key (an item never claimed is absent). */
export async function findInboxClaims(db: Db | Tx, itemKeys: readonly string[]): Promise<Map<string, InboxClaim>> {
  if (itemKeys.length === 0) return new Map();
  const rows = await db.inboxClaim.findMany({ where: { itemKey: { in: [...itemKeys] } } });
  return new Map(
    rows.map((r) => [
      r.itemKey,
      { itemKey: r.itemKey, claimedBy: r.claimedBy, claimedAt: r.claimedAt, version: r.version },
    ]),
  );
}

function conflict(itemKey: string, current: InboxClaim, expected: number): AppError {
  const holder = current.claimedBy ? `claimed by ${current.claimedBy}` : "not claimed";
  return new AppError(
    "version_conflict",
    `The claim on ${itemKey} changed since you read it (you saw version ${expected}; it is now version ${current.version}, ${holder}).`,
    { claim: { ...current, claimedAt: current.claimedAt?.toISOString() ?? null } },
  );
}

/**
 * Sets the item's claim to `claimedBy` (a person) or releases it (null), at
 * the version the person saw: two people claiming one item at once leave
 * exactly one claim, and the other is told whose. The caller checked the
 * rules (who may take or release); this only writes.
 */
export async function compareAndSetClaim(
  db: Db,
  input: { itemKey: string; expectedVersion: number; claimedBy: string | null; taskId: string | null },
  actor: AuditActor,
): Promise<InboxClaim> {
  return db.$transaction(async (tx) => {
    const now = new Date();
    const data = { claimedBy: input.claimedBy, claimedAt: input.claimedBy ? now : null, updatedAt: now };
    let written: number;
    if (input.expectedVersion === 0) {
      // Never claimed: the first insert wins; a second sees its row and loses as a conflict below.
      written = await tx.$executeRaw`
        INSERT INTO inbox_claims (item_key, task_id, claimed_by, claimed_at, version, updated_at)
        VALUES (${input.itemKey}, ${input.taskId}, ${data.claimedBy}, ${data.claimedAt}, 1, ${now})
        ON CONFLICT (tenant_id, item_key) DO NOTHING`;
    } else {
      ({ count: written } = await tx.inboxClaim.updateMany({
        where: { itemKey: input.itemKey, version: input.expectedVersion },
        data: { ...data, version: { increment: 1 } },
      }));
    }
    const row = await tx.inboxClaim.findFirst({ where: { itemKey: input.itemKey } });
    const current: InboxClaim = row
      ? { itemKey: row.itemKey, claimedBy: row.claimedBy, claimedAt: row.claimedAt, version: row.version }
      : unclaimed(input.itemKey);
    if (written === 0) throw conflict(input.itemKey, current, input.expectedVersion);
    await appendAuditEntry(tx, {
      action: input.claimedBy ? "inbox.claimed" : "inbox.unclaimed",
      actor,
      subject: { type: "inbox_item", id: input.itemKey },
      taskId: input.taskId,
      details: { item: input.itemKey, version: current.version, claimed_by: input.claimedBy },
    });
    return current;
  });
}

/** Task-data retention: the claims on a task's items go with the task (lib/use-cases/retention/apply-task-retention.ts). */
export async function deleteClaimsOfTask(tx: Tx, taskId: string): Promise<{ inbox_claims: number }> {
  return { inbox_claims: (await tx.inboxClaim.deleteMany({ where: { taskId } })).count };
}
