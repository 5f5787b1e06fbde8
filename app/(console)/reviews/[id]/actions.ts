"use server";

import { z } from "zod";
import type { FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { getConnectors } from "@/lib/connectors/effects";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { reviewDecisionKinds } from "@/lib/stores/review-store";
import { describeConflict, describeDecisionOutcome } from "@/lib/adapters/console/reviews/reviews";
import { reasonMaxLength, type DecisionFormState } from "@/lib/adapters/console/reviews/reviews-form";
import { consoleDb } from "@/lib/adapters/auth/session";

const DecisionFormSchema = z.object({
  reviewId: z.string().min(1).max(256),
  expectedVersion: z.coerce.number().int().min(1),
  // The engine's own list: a decision it learns is a decision the form can send.
  decision: z.enum(reviewDecisionKinds),
  reason: z
    .string()
    .trim()
    .min(1, "Give a reason: it is recorded with your decision.")
    .max(reasonMaxLength, "Keep the reason under 1,000 characters."),
});

/**
 * A person's decision on a frozen irreversible action. Authorizes on the
 * server whatever the page showed, and hands the engine the review version
 * the page was rendered at: two operators deciding at once leave exactly one
 * decision, and the second is told who decided first.
 */
export const decideReviewAction: FormAction<DecisionFormState> = sessionFormAction({
  name: "decideReviewAction",
  permission: "tasks:transition",
  schema: DecisionFormSchema,
  nothingWas: "decided",
  errorState: (message, error) => ({
    status: "error",
    message,
    details: (error?.details.violations ?? []).map((v) => v.message).filter((m) => m !== message),
  }),
  // A refusal may mean the review moved on (a round closed, the execution settled): show it as it is now.
  // Not after not_found: there is nothing left to render, and the message says where to go.
  refreshAfter: (error) => error.code !== "not_found" && error.code !== "forbidden",
  async run({ reviewId, expectedVersion, decision, reason }, { actor }) {
    const result = await decideReview(
      await consoleDb(),
      reviewId,
      { expected_version: expectedVersion, decision, reason },
      actor,
      getConnectors(),
    );
    return describeDecisionOutcome(result, decision);
  },
  async answer(error, { input, principal }) {
    switch (error.code) {
      case "version_conflict": {
        const fresh = await describeConflict(
          await consoleDb(),
          input.reviewId,
          error.details.review,
          principal.identity,
        );
        return {
          status: "conflict",
          message:
            fresh?.headline ?? "Another operator decided first — here is the fresh state; nothing was overwritten.",
          detail: fresh?.detail ?? null,
        };
      }
      case "not_found":
        return { status: "error", message: "This review no longer exists. Go back to the queue.", details: [] };
      case "invariant_violated": {
        const invariants = (error.details.violations ?? []).map((v) => v.invariant);
        if (invariants.includes("one_decision_per_person")) {
          return {
            status: "error",
            message:
              "Refused: you already decided in this round of the review. Four-eyes means a second approval must come from a different operator; yours is not counted twice.",
            details: [],
          };
        }
        return { status: "error", message: `Refused: ${error.message}`, details: [] };
      }
      default:
        return undefined;
    }
  },
});
