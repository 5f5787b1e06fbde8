"use server";

import { refresh } from "next/cache";
import { z } from "zod";
import { actorOf } from "@/lib/auth/permissions";
import { requireSessionPermission } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { reconcileAlert } from "@/lib/engine/alert-actions";
import { getConnectors } from "@/lib/engine/connectors";
import { acknowledgeAlert, escalateAlert, resolveDivergence } from "@/lib/engine/divergence";
import { isAppError } from "@/lib/errors";
import { alertActionText, alertReasonMaxLength, type AlertActionState } from "@/lib/console/alerts-form";

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
export async function alertAction(_previous: AlertActionState, formData: FormData): Promise<AlertActionState> {
  try {
    const principal = await requireSessionPermission("alerts:act", "action alertAction");
    const form = FormSchema.safeParse(Object.fromEntries(formData));
    if (!form.success) return { status: "error", message: form.error.issues[0]?.message ?? "The form was incomplete; reload the page and try again." };
    const { alertId, expectedVersion, action, reason } = form.data;
    if (alertActionText[action].needsReason && !reason) return { status: "error", message: "Give a reason: it is recorded with your action." };
    const db = getDb();
    const actor = actorOf(principal);
    let answer: AlertActionState;
    switch (action) {
      case "acknowledge":
        await acknowledgeAlert(db, alertId, { expectedVersion, reason }, actor);
        answer = { status: "done", tone: "success", message: "Acknowledged. The alert no longer blocks its task; your reason is on record." };
        break;
      case "escalate": {
        const r = await escalateAlert(db, alertId, { expectedVersion, reason }, actor);
        answer = { status: "done", tone: "success", message: `Escalated. ${r.task.note}` };
        break;
      }
      case "reconcile": {
        const r = await reconcileAlert(db, alertId, { expectedVersion }, actor, getConnectors());
        answer = { status: "done", tone: r.finding.agreed ? "success" : "info", message: r.finding.summary };
        break;
      }
      case "resolve":
        await resolveDivergence(db, alertId, { expectedVersion, resolution: reason }, actor);
        answer = { status: "done", tone: "success", message: "Resolved. Your resolution is on record." };
        break;
    }
    refresh();
    return answer;
  } catch (error) {
    if (!isAppError(error)) throw error;
    refresh();
    switch (error.code) {
      case "version_conflict":
        return { status: "conflict", message: `${error.message} The page now shows the alert as it is.` };
      case "unauthenticated":
        return { status: "error", message: "Your session has ended. Sign in again; nothing was changed." };
      case "forbidden":
        return { status: "error", message: `Not allowed: ${error.message} Nothing was changed.` };
      case "not_found":
        return { status: "error", message: "This alert no longer exists." };
      default:
        return { status: "error", message: `Refused: ${error.message}` };
    }
  }
}
