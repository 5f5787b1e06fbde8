"use server";

import { z } from "zod";
import type { FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { consoleDb } from "@/lib/adapters/auth/session";
import { shortIdentity } from "@/lib/adapters/console/shared/format";
import type { ClaimFormState } from "@/lib/adapters/console/inbox/inbox-form";
import { claimInboxItem } from "@/lib/use-cases/inbox/claim-inbox-item";

const ClaimFormSchema = z.object({
  item: z.string().min(1).max(300),
  expectedVersion: z.coerce.number().int().min(0),
  action: z.enum(["claim", "unclaim"]),
});

/**
 * Claim or release an inbox item. Checked on the server (inbox:read, the
 * item in the person's own inbox, tenant included) whatever the page
 * showed; the claim's version the page was rendered at is the CAS target.
 */
export const claimInboxItemAction: FormAction<ClaimFormState> = sessionFormAction({
  name: "claimInboxItemAction",
  permission: "inbox:read",
  schema: ClaimFormSchema,
  errorState: (message) => ({ status: "error", message }),
  async run({ item, expectedVersion, action }, { principal }) {
    await claimInboxItem(await consoleDb(), { item, expected_version: expectedVersion, action }, principal);
    return {
      status: "done",
      item,
      message:
        action === "claim"
          ? "Claimed: the others see you are on it. Claims are advisory; deciding still needs your permission."
          : "Released: the item is unclaimed again.",
    };
  },
  answer(error) {
    if (error.code !== "version_conflict") return undefined;
    const claim = (error.details as { claim?: { claimedBy?: string | null } }).claim;
    return {
      status: "conflict",
      message: claim?.claimedBy
        ? `${shortIdentity(claim.claimedBy)} claimed it first: the list shows their claim now. Nothing was changed.`
        : "The claim changed since the list was drawn: the list shows it as it is now. Nothing was changed.",
    };
  },
});
