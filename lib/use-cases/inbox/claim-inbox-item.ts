import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { isInboxItemKey } from "@/lib/model/inbox/inbox-items";
import { compareAndSetClaim, type InboxClaim } from "@/lib/stores/inbox-claims";
import { gatherInbox } from "@/lib/use-cases/inbox/gather-inbox";

export const ClaimInboxItemInputSchema = z.strictObject({
  item: z.string().trim().min(1).max(300).refine(isInboxItemKey, "not an inbox item key"),
  /** The claim's version the person saw (0: never claimed): a claim that moved meanwhile is a conflict. */
  expected_version: z.number().int().min(0),
  action: z.enum(["claim", "unclaim"]),
});
export type ClaimInboxItemInput = z.input<typeof ClaimInboxItemInputSchema>;

/**
 * A person takes an inbox item ("claim") or lets it go ("unclaim"), so the
 * others see it is being worked. Only an item in the person's own inbox:
 * one that is not waiting, belongs to another tenant, or is of a kind their
 * role cannot act on answers not_found, exactly as a made-up key does. A
 * claim held by someone else is theirs to release. Advisory: nothing else
 * reads a claim; deciding the item still checks permission and four eyes.
 */
export async function claimInboxItem(db: Db, raw: ClaimInboxItemInput, principal: Principal): Promise<InboxClaim> {
  const input = parseOrThrow(ClaimInboxItemInputSchema, raw);
  if (principal.kind !== "user") throw new AppError("forbidden", "Inbox items are claimed by people, not agents.");
  const item = (await gatherInbox(db, principal)).find((i) => i.key === input.item);
  if (!item) throw new AppError("not_found", `Nothing in your inbox is ${input.item}.`);
  const holder = item.claim.claimedBy;
  if (input.action === "claim" && holder === principal.identity && item.claim.version === input.expected_version) {
    return { itemKey: item.key, ...item.claim };
  }
  if (holder !== null && holder !== principal.identity && item.claim.version === input.expected_version) {
    throw new AppError(
      "version_conflict",
      `${input.item} is claimed by ${holder}: only they can release it. A claim is advisory; you may still act on the item.`,
      { claim: { ...item.claim, claimedAt: item.claim.claimedAt?.toISOString() ?? null } },
    );
  }
  if (input.action === "unclaim" && holder === null && item.claim.version === input.expected_version) {
    return { itemKey: item.key, ...item.claim };
  }
  return compareAndSetClaim(
    db,
    {
      itemKey: item.key,
      expectedVersion: input.expected_version,
      claimedBy: input.action === "claim" ? principal.identity : null,
      taskId: item.taskId,
    },
    actorOf(principal),
  );
}
