/** The alert action forms' shared shapes (client and server). */
export type AlertAction = "acknowledge" | "escalate" | "reconcile" | "resolve";

export type AlertActionState =
  | { status: "idle" }
  | { status: "done"; message: string; tone: "success" | "info" }
  | { status: "conflict"; message: string }
  | { status: "error"; message: string };

export const alertReasonMaxLength = 2000;

export const alertActionText: Record<AlertAction, { label: string; verb: string; help: string; needsReason: boolean }> =
  {
    acknowledge: {
      label: "Acknowledge",
      verb: "acknowledged",
      help: "You looked and no correction is needed: say why. It stays listed and keeps counting sightings, but no longer blocks its task.",
      needsReason: true,
    },
    escalate: {
      label: "Escalate",
      verb: "escalated",
      help: "Hand it to people: the task moves to WAITING_FOR_HUMAN where its workflow allows. It keeps blocking irreversible work.",
      needsReason: true,
    },
    reconcile: {
      label: "Reconcile now",
      verb: "reconciled",
      help: "Ask the provider now. Closed only if Verity's ledger and the provider agree; otherwise what the provider said is recorded and it stays open.",
      needsReason: false,
    },
    resolve: {
      label: "Resolve",
      verb: "resolved",
      help: "The problem is corrected: say how. A check that still sees it raises a new alert.",
      needsReason: true,
    },
  };
