"use server";

import { refresh } from "next/cache";
import { z } from "zod";
import { actorOf } from "@/lib/auth/permissions";
import { requireSessionPermission } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { getConnectors } from "@/lib/engine/connectors";
import { decideReview } from "@/lib/engine/reviews";
import { isAppError } from "@/lib/errors";
import { describeConflict, describeDecisionOutcome } from "@/lib/console/reviews";
import { reasonMaxLength, type DecisionFormState } from "@/lib/console/reviews-form";

const DecisionFormSchema = z.object({
  reviewId: z.string().min(1).max(256),
  expectedVersion: z.coerce.number().int().min(1),
  decision: z.enum(["approve_execute", "approve_accept_evidence", "reject", "escalate"]),
  reason: z.string().trim().min(1, "Give a reason: it is recorded with your decision.").max(reasonMaxLength, "Keep the reason under 1,000 characters."),
});

/**
 * A person's decision on a frozen irreversible action. Authorizes on the
 * server whatever the page showed, and hands the engine the review version
 * the page was rendered at: two operators deciding at once leave exactly one
 * decision, and the second is told who decided first.
 */
export async function decideReviewAction(_previous: DecisionFormState, formData: FormData): Promise<DecisionFormState> {
  let reviewId: string | undefined;
  let actorIdentity: string | undefined;
  try {
    const principal = await requireSessionPermission("tasks:transition", "action decideReviewAction");
    actorIdentity = principal.identity;
    const form = DecisionFormSchema.safeParse(Object.fromEntries(formData));
    if (!form.success) {
      return { status: "error", message: form.error.issues[0]?.message ?? "The form was incomplete; reload the page and try again.", details: [] };
    }
    reviewId = form.data.reviewId;
    const { expectedVersion, decision, reason } = form.data;
    const result = await decideReview(getDb(), reviewId, { expected_version: expectedVersion, decision, reason }, actorOf(principal), getConnectors());
    refresh();
    return describeDecisionOutcome(result, decision);
  } catch (error) {
    if (!isAppError(error)) throw error;
    switch (error.code) {
      case "version_conflict": {
        refresh();
        const fresh = reviewId ? await describeConflict(getDb(), reviewId, error.details.review, actorIdentity) : null;
        return {
          status: "conflict",
          message: fresh?.headline ?? "Another operator decided first — here is the fresh state; nothing was overwritten.",
          detail: fresh?.detail ?? null,
        };
      }
      case "unauthenticated":
        return { status: "error", message: "Your session has ended. Sign in again; nothing was decided.", details: [] };
      case "forbidden":
        return { status: "error", message: `Not allowed: ${error.message} Nothing was decided.`, details: [] };
      case "not_found":
        return { status: "error", message: "This review no longer exists. Go back to the queue.", details: [] };
      case "invariant_violated": {
        refresh();
        const invariants = (error.details.violations ?? []).map((v) => v.invariant);
        if (invariants.includes("one_decision_per_person")) {
          return {
            status: "error",
            message: "Refused: you already decided in this round of the review. Four-eyes means a second approval must come from a different operator; yours is not counted twice.",
            details: [],
          };
        }
        return { status: "error", message: `Refused: ${error.message}`, details: [] };
      }
      default:
        refresh();
        return { status: "error", message: error.message, details: (error.details.violations ?? []).map((v) => v.message).filter((m) => m !== error.message) };
    }
  }
}
