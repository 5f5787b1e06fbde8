import type { AlertStatus } from "@/lib/generated/prisma/enums";

/**
 * What the alerts centre knows how to say, as data: every kind of alert, its
 * severity under the spec's risk matrix, whether it stops irreversible work
 * on its task, and its name in words. Pure: lib/use-cases/alerts/divergence.ts writes
 * the alerts, the invariant monitor (lib/use-cases/monitor/run-monitor-pass.ts)
 * finds them, the console and the API describe them from here.
 */

/** Internal state and an external system disagree: raised by the reconciler and by recorded outcomes. */
export const divergenceKinds = [
  "effect_missing_at_provider", // we recorded success, the provider has no such effect
  "effect_found_after_failure", // we recorded failure, the provider has the effect
  "effect_mismatch", // the provider's effect differs from what we asked (amount, customer)
  "effect_after_task_ended", // an irreversible effect succeeded on a task that was already cancelled or failed
  "completed_with_open_mandatory_subtask",
] as const;
export type DivergenceKind = (typeof divergenceKinds)[number];

/** Found by the continuous invariant monitor over live data. */
export const monitorKinds = [
  "success_without_evidence", // a SUCCEEDED / RECONCILED_SUCCEEDED execution whose evidence is missing or names another execution or key
  "unknown_outcome_expired", // OUTCOME_UNKNOWN, or SENT without an outcome, older than the provider's idempotency window
  "stale_write", // a write refused for a fencing token that is not the current lease, or for a version that no longer says where the task is
  "stale_restore_attempt", // a checkpoint restore refused because it would have overwritten newer or finished state
  "corrupt_checkpoint", // a restore refused because the checkpoint does not verify
  "state_invariant_broken", // a stored task state that breaks TaskState v2 or a state invariant
  "audit_chain_break", // the audit log's hash chain does not verify
] as const;
export type MonitorKind = (typeof monitorKinds)[number];

export type AlertKind = DivergenceKind | MonitorKind;
export const alertKinds: readonly AlertKind[] = [...divergenceKinds, ...monitorKinds];

export const alertSeverities = ["critical", "high", "medium"] as const;
export type AlertSeverity = (typeof alertSeverities)[number];

/**
 * The spec's risk matrix (PHASE 15 and "Risk Matrix"): duplicate irreversible
 * action, internal/external divergence, stale checkpoint overwrite and an
 * unknown outcome treated as settled are critical; invalid completion and
 * weak transition validation are high.
 */
export const alertSeverityOf: Record<AlertKind, AlertSeverity> = {
  // Internal ≠ external.
  effect_missing_at_provider: "critical",
  effect_found_after_failure: "critical",
  effect_mismatch: "critical",
  effect_after_task_ended: "critical",
  // Invalid completion.
  completed_with_open_mandatory_subtask: "high",
  // "tool_status = SUCCESS, external = UNKNOWN must be OUTCOME_UNKNOWN": a success nobody can prove is an unknown outcome treated as settled.
  success_without_evidence: "critical",
  // Past the window the provider forgets the key: a retry could make the effect twice (duplicate irreversible action).
  unknown_outcome_expired: "critical",
  // Concurrent-worker overwrite (spec: "older state cannot overwrite newer state", critical). The refusal held, the alert is about the writer.
  stale_write: "critical",
  // Stale checkpoint overwrite, attempted and refused.
  stale_restore_attempt: "critical",
  // A snapshot that is not internally consistent: restore protection held, the checkpoint itself is damaged.
  corrupt_checkpoint: "high",
  // Weak transition validation: a state the rules would never have written.
  state_invariant_broken: "high",
  // The record itself cannot be trusted any more.
  audit_chain_break: "critical",
};

/** A version refusal is ordinary contention; this severity is for the ones alerted (the writer's view had stopped being true). */
export const staleVersionSeverity: AlertSeverity = "high";

/**
 * The kinds that stop irreversible intents on their task while OPEN or
 * ESCALATED (hasOpenDivergence). Internal ≠ external, because the next
 * refund would be decided on a record the provider contradicts (completion
 * with a pending mandatory subtask stays with them, as it always blocked); a success
 * without evidence and an expired unknown outcome, because the task's belief
 * about an irreversible effect is unproven and a retry may repeat it. The
 * others are refusals that already held (stale writes, restores), damage the
 * engine already refuses to build upon (a broken stored state fails every
 * transition's check-before), or about the record rather than the task.
 */
export const blockingKinds: ReadonlySet<AlertKind> = new Set<AlertKind>([
  "effect_missing_at_provider",
  "effect_found_after_failure",
  "effect_mismatch",
  "effect_after_task_ended",
  "completed_with_open_mandatory_subtask",
  "success_without_evidence",
  "unknown_outcome_expired",
]);

/** Statuses in which a blocking alert blocks: a person acknowledging one has recorded why no correction is needed. */
export const blockingStatuses: readonly AlertStatus[] = ["OPEN", "ESCALATED"];
/** Not closed: a new sighting of the same fingerprint counts on this alert instead of opening another. */
export const unresolvedStatuses: readonly AlertStatus[] = ["OPEN", "ACKNOWLEDGED", "ESCALATED"];

export const alertStatuses: readonly AlertStatus[] = ["OPEN", "ACKNOWLEDGED", "ESCALATED", "RESOLVED"];

export type AlertSource = "reconciler" | "outcome" | "monitor" | "engine";

export const alertKindText: Record<AlertKind, string> = {
  effect_missing_at_provider: "Verity recorded success; the provider has no such effect",
  effect_found_after_failure: "Verity recorded failure; the provider has the effect",
  effect_mismatch: "The provider's effect differs from what was asked",
  effect_after_task_ended: "An irreversible effect succeeded after the task had ended",
  completed_with_open_mandatory_subtask: "Completed while a mandatory subtask is pending",
  success_without_evidence: "Tool success without matching evidence",
  unknown_outcome_expired: "Unknown outcome older than the provider's idempotency window",
  stale_write: "A worker wrote with an outdated version or fencing token",
  stale_restore_attempt: "A stale checkpoint restore was attempted",
  corrupt_checkpoint: "A restore found the checkpoint corrupt",
  state_invariant_broken: "A stored task state breaks an invariant",
  audit_chain_break: "The audit chain does not verify",
};

export function isAlertKind(kind: string): kind is AlertKind {
  return (alertKinds as readonly string[]).includes(kind);
}

export function isAlertSeverity(value: string): value is AlertSeverity {
  return (alertSeverities as readonly string[]).includes(value);
}

export function describeAlertKind(kind: string): string {
  return isAlertKind(kind) ? alertKindText[kind] : kind;
}

export function isBlocking(alert: { kind: string; status: AlertStatus }): boolean {
  return isAlertKind(alert.kind) && blockingKinds.has(alert.kind) && blockingStatuses.includes(alert.status);
}

/**
 * Same fingerprint, same problem. The default names the kind, the task and
 * the execution: the reconciler's one-open-alert-per-(task, execution, kind)
 * rule. Checks over live data add what makes a sighting the same (a task's
 * version, an audit link), so a changed row is a new problem.
 */
export function defaultFingerprint(kind: string, taskId: string, executionId?: string | null): string {
  return `${kind}:${taskId || "-"}:${executionId ?? "-"}`;
}
