import { checkpointTriggerDescriptions, type CheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-schema";
import type { IntegrityCheckName } from "@/lib/model/checkpoints/checkpoint-schema";
import type {
  CheckpointRestoreView,
  RestoreEffects,
  RestoreLeasePlan,
  RestorePlan,
  RestoreRefusalCode,
} from "@/lib/model/checkpoints/restore-plan";
import type { IntegrityCheck, IntegrityReport } from "@/lib/model/checkpoints/checkpoint-reports";
import type { StatusTone } from "@/lib/adapters/console/shared/status";
import { formatDateTime, formatInteger, formatUsd, shortIdentity } from "@/lib/adapters/console/shared/format";

/**
 * How the checkpoint pages put checkpoints, integrity reports and restore
 * plans into words. Pure functions (type-only imports from the engine), so
 * client components use them too; tested beside.
 */

/** Integrity at a glance: what a person needs to know before trusting a checkpoint. */
export type IntegrityStatus = "valid" | "corrupt" | "unverifiable";

export interface IntegrityStatusInfo {
  label: string;
  /** A mark that does not depend on colour. */
  glyph: string;
  tone: StatusTone;
  meaning: string;
}

export const integrityStatusInfo: Record<IntegrityStatus, IntegrityStatusInfo> = {
  valid: {
    label: "Valid",
    glyph: "✓",
    tone: "success",
    meaning:
      "Every check passed: the stored bytes are the ones that were signed, and the snapshot is a valid state of the task's workflow.",
  },
  corrupt: {
    label: "Corrupt",
    glyph: "✗",
    tone: "danger",
    meaning:
      "The stored bytes are not what was signed, or do not hold a valid snapshot. It is never restored; the newest earlier valid checkpoint is the fallback.",
  },
  unverifiable: {
    label: "Unverifiable",
    glyph: "?",
    tone: "attention",
    meaning:
      "The bytes are consistent, but this server lacks what it needs to vouch for them: the signing key or the workflow definition. It is refused for restores until it can be verified.",
  },
};

export const integrityStatuses = Object.keys(integrityStatusInfo) as IntegrityStatus[];

export interface IntegrityVerdict {
  status: IntegrityStatus;
  /** One sentence: what passed, or what failed and why. */
  reason: string;
}

/**
 * Corrupt and unverifiable are told apart by what failed. A signature that
 * does not match under a key this server has, a digest that disagrees, an
 * unreadable payload: the bytes are wrong. A key id this server does not
 * hold, or a workflow definition it does not know, with every other check
 * passing: the bytes may be fine, but nobody here can say so. Both are
 * refused for restores (the engine cannot tell an unknown key from a forgery).
 */
export function integrityVerdict(
  report: IntegrityReport,
  keyId: string,
  knownKeyIds: ReadonlySet<string>,
): IntegrityVerdict {
  const failed = report.checks.filter((c) => !c.ok);
  if (report.ok || failed.length === 0)
    return { status: "valid", reason: `All ${report.checks.length} checks passed.` };
  const lacking = (c: IntegrityCheck) =>
    (c.check === "signature" && !knownKeyIds.has(keyId)) || c.check === "workflow_compatible";
  const failedWords = failed.map((c) => `${integrityCheckInfo[c.check].label.toLowerCase()} (${c.message})`).join("; ");
  if (failed.every(lacking)) return { status: "unverifiable", reason: `Cannot be checked here: ${failedWords}.` };
  return { status: "corrupt", reason: `Failed: ${failedWords}.` };
}

export const integrityCheckInfo: Record<IntegrityCheckName, { label: string; what: string }> = {
  payload_parses: { label: "Payload readable", what: "The stored bytes open (sealed at rest) and are JSON." },
  payload_canonical: {
    label: "Canonical form",
    what: "Stored exactly as signed: sorted keys, no whitespace, no signature inside the signed bytes.",
  },
  schema: {
    label: "Schema version",
    what: "A checkpoint schema this server reads; older versions are upgraded on read, unknown ones refused.",
  },
  snapshot_digest: {
    label: "Snapshot digest",
    what: "The sha256 of the snapshot's canonical bytes equals the digest the checkpoint records.",
  },
  signature: { label: "Signature", what: "HMAC-SHA256 of the payload with the key its key id names." },
  columns_match: { label: "Columns agree", what: "The columns used for listing say what the signed payload says." },
  snapshot_valid: {
    label: "Snapshot valid",
    what: "The snapshot is TaskState v2 of this task at this version, and the workflow's invariants hold.",
  },
  workflow_compatible: {
    label: "Workflow compatible",
    what: "Its workflow definition is known here and is the one the task is pinned to.",
  },
};

/** "Signature: passed. HMAC-SHA256 with key "local" matches". */
export function describeCheck(check: IntegrityCheck): string {
  return `${integrityCheckInfo[check.check].label}: ${check.ok ? "passed" : "FAILED"}. ${capitalize(check.message)}`;
}

export function integritySummary(report: IntegrityReport): string {
  const failed = report.checks.filter((c) => !c.ok).length;
  return failed === 0
    ? `All ${report.checks.length} checks passed`
    : `${failed} of ${report.checks.length} checks failed`;
}

export const triggerLabels: Record<CheckpointTrigger, string> = {
  on_demand: "On demand",
  gate_opened: "Gate opened",
  artifacts_validated: "Artifacts validated",
  before_irreversible_effect: "Before irreversible effect",
  escalated: "Escalated",
  cancelled: "Cancelled",
  terminal: "Terminal state",
  state_boundary: "Workflow boundary",
};

export function describeTrigger(trigger: CheckpointTrigger): { label: string; description: string } {
  return { label: triggerLabels[trigger], description: checkpointTriggerDescriptions[trigger] };
}

export const refusalInfo: Record<RestoreRefusalCode, { title: string; next: string }> = {
  corrupt: { title: "Corrupt checkpoint", next: "Restore the fallback checkpoint instead, if there is one." },
  incompatible: {
    title: "Incompatible workflow",
    next: "Restore a checkpoint of the workflow definition the task is pinned to.",
  },
  stale: {
    title: "Stale: older than the committed state",
    next: "Choose to rewind to restore it anyway: its state becomes a new version, and the history stays as it is.",
  },
  current: { title: "Nothing to restore", next: "The task is already at this checkpoint's version." },
  terminal: {
    title: "The task has ended",
    next: "A finished task never re-enters execution; start a new task instead.",
  },
  diverged: { title: "Open divergence alert", next: "Resolve the alert on the task page, then plan again." },
  unreconciled: {
    title: "Outcome unknown",
    next: "Wait for the reconciler to settle the effect with the provider, then plan again.",
  },
  awaiting_human: {
    title: "Waiting for a person",
    next: "Decide the frozen effect in the review queue, then plan again.",
  },
  invalid_state: {
    title: "Would break an invariant",
    next: "This checkpoint cannot be restored onto the task as it is now.",
  },
  version_conflict: { title: "The task moved on", next: "Plan again from the task as it is now." },
};

/** The plan's verdict in one line: what would be written, or why nothing would. */
export function planHeadline(
  plan: Pick<RestorePlan, "allowed" | "refusal" | "kind" | "current" | "checkpoint">,
): string {
  if (!plan.allowed) {
    const refusal = plan.refusal;
    return refusal ? `Refused — ${refusalInfo[refusal.code].title}` : "Refused";
  }
  const next = plan.current.version + 1;
  switch (plan.kind) {
    case "rewind":
      return `Allowed: a rewind to the state of version ${plan.checkpoint.stateVersion}, written as new version ${next}`;
    case "roll_forward":
      return `Allowed: a roll forward to the state of version ${plan.checkpoint.stateVersion}, written as version ${next}`;
    case "none":
      return `Allowed: written as version ${next}`;
  }
}

export type EffectGroup = keyof RestoreEffects;

export const effectGroupInfo: Record<EffectGroup, { title: string; meaning: string; blocks: boolean }> = {
  skippedByReceipt: {
    title: "Skipped by receipt",
    meaning: "A receipt exists: resuming returns the recorded result and the tool is not called again.",
    blocks: false,
  },
  needsReconciliation: {
    title: "Needs reconciliation",
    meaning:
      "Sent with an unknown outcome: the reconciler asks the provider before anything is retried. Blocks the restore.",
    blocks: true,
  },
  needsHuman: {
    title: "Needs a person",
    meaning: "Frozen for a decision in the review queue. Blocks the restore.",
    blocks: true,
  },
  retrySameKey: {
    title: "Retried with the same key",
    meaning:
      "Failed for certain, or never sent: a new attempt uses the same idempotency key, which the provider applies at most once.",
    blocks: false,
  },
  cancelled: { title: "Cancelled", meaning: "Will never be sent.", blocks: false },
};

export const effectGroups = Object.keys(effectGroupInfo) as EffectGroup[];

/** What the restore does to the lease, in words. */
export function describeLease(
  lease: Pick<RestoreLeasePlan, "active" | "holder" | "fencingToken" | "expiresAt" | "action">,
  allowed: boolean,
): string {
  if (!lease.active || !lease.holder)
    return "No worker holds a live lease: nothing to fence. The next worker acquires a lease to continue.";
  const who = `${shortIdentity(lease.holder)} (fencing token ${lease.fencingToken ?? "?"}${lease.expiresAt ? `, until ${formatDateTime(lease.expiresAt)}` : ""})`;
  if (lease.action === "fence") {
    return `The lease of ${who} is fenced: it ends now and its token is raised, so the old holder's writes are refused. A worker acquires a new lease to continue from the restored version.`;
  }
  return allowed ? `${who} keeps its lease.` : `${who} keeps its lease: nothing is applied.`;
}

export interface BudgetLine {
  label: string;
  checkpoint: string;
  current: string;
  resulting: string;
}

/** Money, tokens and hops: what the checkpoint says, what is spent now, and what the restore writes (never less than now). */
export function budgetLines(budget: RestorePlan["reauthorization"]["budget"]): BudgetLine[] {
  return [
    {
      label: "Spent",
      checkpoint: formatUsd(budget.checkpoint.currency_usd),
      current: formatUsd(budget.current.currency_usd),
      resulting: formatUsd(budget.resulting.currency_usd),
    },
    {
      label: "Tokens",
      checkpoint: formatInteger(budget.checkpoint.tokens),
      current: formatInteger(budget.current.tokens),
      resulting: formatInteger(budget.resulting.tokens),
    },
    {
      label: "Hops",
      checkpoint: formatInteger(budget.checkpoint.hops),
      current: formatInteger(budget.current.hops),
      resulting: formatInteger(budget.resulting.hops),
    },
  ];
}

export function describePolicy(policy: RestorePlan["reauthorization"]["policyVersion"]): string {
  if (!policy.checkpoint) return `The current policy (${policy.current}) applies; the checkpoint's could not be read.`;
  return policy.changed
    ? `The policy changed since the checkpoint (${policy.checkpoint} then, ${policy.current} now): the current one applies, never the checkpoint's.`
    : `Unchanged since the checkpoint (${policy.current}); re-read all the same.`;
}

export function describeWorkflow(workflow: RestorePlan["reauthorization"]["workflow"]): string {
  return workflow.compatible
    ? `${workflow.name} v${workflow.version}: the checkpoint's definition is the one the task is pinned to.`
    : `${workflow.name} v${workflow.version} is the task's definition; the checkpoint's is not usable here.`;
}

/** The answer to an applied restore. */
export function describeRestoreResult(result: {
  version: number;
  status: string;
  checkpointVersion: number;
  rewind: boolean;
  replayed: boolean;
}): string {
  if (result.replayed)
    return `Already applied: this restore was submitted before. The task is at version ${result.version} (${result.status}).`;
  const what = result.rewind
    ? `Rewound to the state of version ${result.checkpointVersion}`
    : `Restored the state of version ${result.checkpointVersion}`;
  return `${what}: the task is now at version ${result.version} (${result.status}). Earlier versions stay in the history.`;
}

/** One line per restore attempt, for the history tables. */
export function describeRestoreAttempt(
  restore: Pick<CheckpointRestoreView, "outcome" | "rewind" | "fromVersion" | "toVersion" | "refusal">,
): string {
  if (restore.outcome === "applied") {
    return `${restore.rewind ? "Rewind" : "Restore"} applied: version ${restore.fromVersion} → ${restore.toVersion ?? "?"}`;
  }
  return `Refused at version ${restore.fromVersion}${restore.refusal ? `: ${refusalInfo[restore.refusal].title.toLowerCase()}` : ""}`;
}

const diffValueLimit = 140;

/** A value of a state diff, short enough for a table cell: strings as they are, everything else as compact JSON. */
export function formatDiffValue(value: unknown, limit = diffValueLimit): string {
  if (value === undefined) return "—";
  const text = typeof value === "string" ? `“${value}”` : JSON.stringify(value);
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** The snapshot as a person reads it: two-space JSON, keys in the order TaskState declares them. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export function checkpointHref(checkpointId: string): string {
  return `/checkpoints/${encodeURIComponent(checkpointId)}`;
}

export function taskCheckpointsHref(taskId: string): string {
  return `/tasks/${encodeURIComponent(taskId)}/checkpoints`;
}

function capitalize(text: string): string {
  return text ? text[0]!.toUpperCase() + text.slice(1) : text;
}
