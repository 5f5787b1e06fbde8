"use server";

import { z } from "zod";
import type { FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { reconcileAlert } from "@/lib/use-cases/alerts/alert-actions";
import { getConnectors } from "@/lib/connectors/effects";
import { acknowledgeAlert, escalateAlert, resolveDivergence } from "@/lib/use-cases/alerts/divergence";
import {
  alertActionText,
  alertReasonMaxLength,
  type AlertActionState,
} from "@/lib/adapters/console/alerts/alerts-form";
import { consoleDb } from "@/lib/adapters/auth/session";

const FormSchema = z.object({
  alertId: z.string().min(1).max(256),
  expectedVersion: z.coerce.number().int().min(1),
  action: z.enum(["acknowledge", "escalate", "reconcile", "resolve"]),
  reason: z.string().trim().max(alertReasonMaxLength, "Keep the reason under 2,000 characters.").default(""),
});

/**
 * A person's action on an alert. Authorizes on the server whatever the page
 * showed (alerts:act), and acts on the alert version the page was rendered
 * at: a second person acting on the same version is told, in words, what
 * the alert is now, and nothing is overwritten.
 */
export const alertAction: FormAction<AlertActionState> = sessionFormAction({
  name: "alertAction",
  permission: "alerts:act",
  schema: FormSchema,
  errorState: (message) => ({ status: "error", message }),
  // Whatever refused the action (the alert moved on, a reconcile that could not decide), show the alert as it is now.
  refreshAfter: () => true,
  async run({ alertId, expectedVersion, action, reason }, { actor }): Promise<AlertActionState> {
    if (alertActionText[action].needsReason && !reason)
      return { status: "error", message: "Give a reason: it is recorded with your action." };
    const db = await consoleDb();
    switch (action) {
      case "acknowledge":
        await acknowledgeAlert(db, alertId, { expectedVersion, reason }, actor);
        return {
          status: "done",
          tone: "success",
          message: "Acknowledged. The alert no longer blocks its task; your reason is on record.",
        };
      case "escalate": {
        const r = await escalateAlert(db, alertId, { expectedVersion, reason }, actor);
        return { status: "done", tone: "success", message: `Escalated. ${r.task.note}` };
      }
      case "reconcile": {
        const r = await reconcileAlert(db, alertId, { expectedVersion }, actor, getConnectors());
        return { status: "done", tone: r.finding.agreed ? "success" : "info", message: r.finding.summary };
      }
      case "resolve":
        await resolveDivergence(db, alertId, { expectedVersion, resolution: reason }, actor);
        return { status: "done", tone: "success", message: "Resolved. Your resolution is on record." };
    }
  },
  answer(error) {
    switch (error.code) {
      case "version_conflict":
        return { status: "conflict", message: `${error.message} The page now shows the alert as it is.` };
      case "not_found":
        return { status: "error", message: "This alert no longer exists." };
      case "forbidden":
        return undefined;
      default:
        return { status: "error", message: `Refused: ${error.message}` };
    }
  },
});
