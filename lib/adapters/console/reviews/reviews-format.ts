import type { DivergenceKind } from "@/lib/use-cases/alerts/divergence";
import type { ExecutionStatus } from "@/lib/model/executions/execution-rules";
import type { ReviewDecisionKind, ReviewStatus } from "@/lib/generated/prisma/enums";
import type { StatusTone } from "@/lib/adapters/console/shared/status";
import { shortIdentity } from "@/lib/adapters/console/shared/format";

/**
 * How the review queue and the execution ledger put things into words.
 * Pure functions, shared by server and client components, tested beside.
 */

const moneyFormats = new Map<string, Intl.NumberFormat>();

function moneyFormat(currency: string): Intl.NumberFormat | null {
  const code = currency.toUpperCase();
  let format = moneyFormats.get(code);
  if (!format) {
    try {
      format = new Intl.NumberFormat("en-US", { style: "currency", currency: code });
    } catch {
      return null;
    }
    moneyFormats.set(code, format);
  }
  return format;
}

/**
 * Minor units to money, with the currency's own number of decimals (JPY has
 * none, USD two). A review of a tool that moves no money (a deploy) has no
 * amount: it reads "no amount", never "$0.00".
 */
export function formatMoney(amountMinor: number | null, currency: string | null): string {
  if (amountMinor === null || currency === null) return "no amount";
  const format = moneyFormat(currency);
  if (!format) return `${amountMinor} ${currency.toUpperCase()} (minor units)`;
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(amountMinor / 10 ** digits);
}

/** What approving a frozen call sends, in words: "the $750.00 refund", "the deploy.release call". */
export function describeEffect(tool: string, amountMinor: number | null, currency: string | null): string {
  const money = amountMinor === null ? null : formatMoney(amountMinor, currency);
  if (tool === "payments.refund") return money ? `the ${money} refund` : "the refund";
  return money ? `the ${tool} call of ${money}` : `the ${tool} call`;
}

/** Past this, a frozen refund has waited long enough to stand out in the queue. */
export const longWaitMs = 60 * 60 * 1000;

export interface ExecutionStatusInfo {
  label: string;
  /** What the status means for the money or the record, in one sentence. */
  meaning: string;
  tone: StatusTone | "unknown" | "frozen";
  /** A mark that does not depend on colour: ? for unknown, ■ for frozen. */
  glyph: string;
}

/**
 * Every execution status in words. OUTCOME_UNKNOWN and NEEDS_HUMAN look
 * different on purpose: the first is Verity still finding out, the second is
 * Verity having given up finding out and waiting for a person.
 */
export const executionStatusInfo: Record<ExecutionStatus, ExecutionStatusInfo> = {
  INTENT_RECORDED: {
    label: "Intent recorded",
    meaning: "Written down before sending; nothing has left yet.",
    tone: "neutral",
    glyph: "○",
  },
  SENT: { label: "Sent", meaning: "The request left; its outcome is not recorded yet.", tone: "active", glyph: "→" },
  SUCCEEDED: {
    label: "Succeeded",
    meaning: "The provider confirmed the effect, with evidence naming this execution.",
    tone: "success",
    glyph: "✓",
  },
  FAILED: { label: "Failed", meaning: "The provider stated that nothing was applied.", tone: "danger", glyph: "✗" },
  OUTCOME_UNKNOWN: {
    label: "Outcome unknown",
    meaning: "It may or may not have happened; Verity is asking the provider before anything is retried.",
    tone: "unknown",
    glyph: "?",
  },
  RECONCILED_SUCCEEDED: {
    label: "Reconciled: happened",
    meaning: "Found at the provider after an unknown outcome or a recorded failure; recorded as succeeded.",
    tone: "success",
    glyph: "✓",
  },
  RECONCILED_FAILED: {
    label: "Reconciled: did not happen",
    meaning: "The provider has no such effect; a retry with the same key is safe.",
    tone: "neutral",
    glyph: "✗",
  },
  NEEDS_HUMAN: {
    label: "Frozen: needs a person",
    meaning:
      "Verity cannot decide alone (the provider could not say what happened, an instruction stopped it, or its attempts ran out); nothing is sent again until an operator decides.",
    tone: "frozen",
    glyph: "■",
  },
  CANCELLED: { label: "Cancelled", meaning: "Will not be sent.", tone: "neutral", glyph: "–" },
};

export const reviewStatusInfo: Record<ReviewStatus, { label: string; tone: StatusTone }> = {
  OPEN: { label: "Open", tone: "attention" },
  APPROVED: { label: "Approved", tone: "success" },
  REJECTED: { label: "Rejected", tone: "neutral" },
  ESCALATED: { label: "Escalated", tone: "warning" },
};

export const decisionInfo: Record<
  ReviewDecisionKind,
  { button: string; past: string; approval: boolean; fourEyes: boolean; help: string }
> = {
  approve_execute: {
    button: "Approve & execute",
    past: "approved re-execution",
    approval: true,
    fourEyes: true,
    help: "Send the same request again under the same idempotency key. The provider applies a key at most once, so this cannot refund twice.",
  },
  approve_accept_evidence: {
    button: "Accept provider's evidence",
    past: "accepted the provider's evidence",
    approval: true,
    fourEyes: false,
    help: "The provider shows the effect happened: record it as succeeded without sending anything. Refused unless the provider's record matches the request.",
  },
  approve_compensate: {
    button: "Accept evidence & compensate",
    past: "accepted the provider's evidence and compensated it",
    approval: true,
    fourEyes: false,
    help: "The provider shows the effect happened, and it must not stand: record it as succeeded, then undo it through its compensating tool, a call of its own under its own key that the task's agent sends. Refused unless the provider's record matches the request.",
  },
  reject: {
    button: "Reject",
    past: "rejected",
    approval: false,
    fourEyes: false,
    help: "Do not send it. The execution is cancelled, and so is the task.",
  },
  escalate: {
    button: "Escalate",
    past: "escalated",
    approval: false,
    fourEyes: false,
    help: "Flag it for someone more senior. It stays in the queue; you cannot decide on it again.",
  },
};

export const decisionKinds = Object.keys(decisionInfo) as ReviewDecisionKind[];

export interface DecisionLike {
  kind: ReviewDecisionKind;
  actor: string;
  /** The review round it was made in. */
  round: number;
}

/** What approvalState reads of a review: its current round and every round's decisions. */
export interface ReviewLike {
  status: ReviewStatus;
  requiredApprovals: number;
  round: number;
  decisions: DecisionLike[];
}

export interface ApprovalState {
  /** Approvals a re-execution needs (2 at or above the four-eyes threshold). */
  required: number;
  /** Distinct people who approved re-execution so far, in order. */
  approvers: string[];
  /** The person looking decided already in the current round: one decision per person per round. */
  viewerDecided: boolean;
  /** Their decision, in words ("approved re-execution"), when they made one. */
  viewerDecision: string | null;
  viewerApproved: boolean;
  /** "1 of 2 approvals". */
  summary: string;
  /** What happens next, from the viewer's point of view. */
  detail: string;
}

const undecided: readonly ReviewStatus[] = ["OPEN", "ESCALATED"];

/**
 * Four-eyes in words: how many approvals it needs, who gave them, and what
 * the viewer can still do. Only the current round counts: a reopened review
 * asks everyone again (lib/stores/review-store.ts).
 */
export function approvalState(review: ReviewLike, viewer?: string): ApprovalState {
  const decisions = review.decisions.filter((d) => d.round === review.round);
  const approvers = [...new Set(decisions.filter((d) => decisionInfo[d.kind].fourEyes).map((d) => d.actor))];
  const required = review.requiredApprovals;
  const mine = viewer === undefined ? undefined : decisions.find((d) => d.actor === viewer);
  const viewerApproved = viewer !== undefined && approvers.includes(viewer);
  const count = Math.min(approvers.length, required);
  const missing = required - count;
  const summary = `${count} of ${required} approval${required === 1 ? "" : "s"}`;
  const base = {
    required,
    approvers,
    viewerDecided: mine !== undefined,
    viewerDecision: mine ? decisionInfo[mine.kind].past : null,
    viewerApproved,
    summary,
  };
  if (!undecided.includes(review.status)) {
    // Accepting the provider's evidence sends nothing, so one person's approval settles it whatever four eyes
    // asks of a re-execution: it is counted as the one approval it needed, not as "0 of 1".
    const settling = decisions.at(-1);
    if (
      review.status === "APPROVED" &&
      settling &&
      decisionInfo[settling.kind].approval &&
      !decisionInfo[settling.kind].fourEyes
    )
      return {
        ...base,
        required: 1,
        approvers: [settling.actor],
        summary: "1 of 1 approval (the provider's evidence, nothing sent)",
        detail: decidedDetail(review.status, decisions, approvers),
      };
    return { ...base, detail: decidedDetail(review.status, decisions, approvers) };
  }
  const waitingFor =
    missing === 1 ? (approvers.length ? "a second, different operator" : "one operator") : `${missing} more operators`;
  // A review that never reopened has one round: no need to speak of rounds.
  const onlyOnce = review.round > 1 ? "nobody decides twice in one round" : "nobody decides twice on one review";
  let detail: string;
  if (mine && viewerApproved) {
    detail = `You approved. Waiting for ${waitingFor}: ${onlyOnce}.`;
  } else if (mine) {
    detail = `You ${decisionInfo[mine.kind].past}. Someone else must decide now: ${onlyOnce}.`;
  } else if (approvers.length === 0) {
    detail =
      required > 1
        ? `Four-eyes: re-executing needs the approval of ${required} different operators. Accepting the provider's evidence needs one (it sends nothing).`
        : "One operator's approval re-executes it.";
  } else {
    detail = `${approvers.map(shortIdentity).join(", ")} approved re-execution. Waiting for ${waitingFor}.`;
  }
  return { ...base, detail };
}

/** Who settled a decided review, in one sentence. */
function decidedDetail(status: ReviewStatus, decisions: DecisionLike[], approvers: string[]): string {
  const last = decisions.at(-1);
  if (status === "APPROVED" && approvers.length > 0 && last?.kind === "approve_execute") {
    return `Re-executed on the approval of ${approvers.map(shortIdentity).join(" and ")}.`;
  }
  if (last) return `${reviewStatusInfo[status].label}: ${shortIdentity(last.actor)} ${decisionInfo[last.kind].past}.`;
  // Closed by the reconciler (the provider settled it) rather than by a decision here.
  return `${reviewStatusInfo[status].label} without a decision here: the provider's answer settled it.`;
}

export interface DecisionRound<D extends DecisionLike> {
  round: number;
  /** The round that counts now; earlier ones are history. */
  current: boolean;
  /** Oldest first. */
  decisions: D[];
  /** Why this round is over, or for the current one what it is waiting on; one sentence. */
  note: string;
}

/**
 * The review's decisions grouped by round, the current round first. Every
 * round is listed, one without decisions too: a round that ended without any
 * still explains why the review reopened.
 */
export function decisionRounds<D extends DecisionLike>(review: {
  round: number;
  status: ReviewStatus;
  decisions: D[];
}): Array<DecisionRound<D>> {
  const rounds: Array<DecisionRound<D>> = [];
  for (let round = review.round; round >= 1; round--) {
    const current = round === review.round;
    const note = current
      ? round === 1
        ? "The first round."
        : undecided.includes(review.status)
          ? `Reopened: the outcome after round ${round - 1} was unknown again, so everyone may decide once more in this round.`
          : `Decided in round ${round}.`
      : `Did not settle it: the outcome of an attempt after this round was unknown, so the review reopened as round ${round + 1}.`;
    rounds.push({ round, current, decisions: review.decisions.filter((d) => d.round === round), note });
  }
  return rounds;
}

/** The queue's one-line four-eyes state: "1 of 2 approvals: waiting for a second operator". */
export function approvalHeadline(state: ApprovalState, status: ReviewStatus): string {
  if (!undecided.includes(status)) return state.summary;
  const missing = state.required - Math.min(state.approvers.length, state.required);
  if (state.approvers.length === 0)
    return state.required > 1
      ? `${state.summary}: needs ${state.required} different operators`
      : `${state.summary}: needs one operator`;
  return `${state.summary}: waiting for ${missing === 1 ? "a second operator" : `${missing} more operators`}`;
}

/** Keys a person looks for first in a provider's answer; the rest follow in their own order. */
const preferredEvidenceKeys = [
  "provider",
  "operation",
  "httpStatus",
  "http_status",
  "replayed",
  "providerRequestId",
  "id",
  "reason",
  "message",
];

/**
 * Evidence as one line to scan: scalar fields as `key: value`, nested objects
 * flattened with dotted keys (two levels), long text cut with an ellipsis.
 */
export function summarizeEvidence(value: unknown, max = 160): string {
  if (value === null || value === undefined) return "";
  if (typeof value !== "object") return cut(String(value), max);
  const parts: string[] = [];
  // A level's own facts before what is nested in it: `execution_status` is read before `request.currency`.
  const walk = (record: Record<string, unknown>, prefix: string, depth: number) => {
    const keys = Object.keys(record);
    const ordered = [
      ...preferredEvidenceKeys.filter((k) => keys.includes(k)),
      ...keys.filter((k) => !preferredEvidenceKeys.includes(k)),
    ];
    const nested: string[] = [];
    for (const key of ordered) {
      const v = record[key];
      if (v === null || v === undefined) continue;
      if (Array.isArray(v)) {
        if (v.every((item) => typeof item !== "object")) parts.push(`${prefix}${key}: ${v.join(", ")}`);
      } else if (typeof v === "object") {
        nested.push(key);
      } else {
        parts.push(`${prefix}${key}: ${String(v)}`);
      }
    }
    if (depth < 2)
      for (const key of nested) walk(record[key] as Record<string, unknown>, `${prefix}${key}.`, depth + 1);
  };
  if (Array.isArray(value)) return cut(`${value.length} item${value.length === 1 ? "" : "s"}`, max);
  walk(value as Record<string, unknown>, "", 0);
  return cut(parts.join(" · "), max);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Divergence kinds in words (lib/use-cases/alerts/divergence.ts names them); an unknown kind is shown as it is. */
export const divergenceKindText: Record<DivergenceKind, string> = {
  effect_missing_at_provider: "Verity recorded success; the provider has no such effect",
  effect_found_after_failure: "Verity recorded failure; the provider has the effect",
  effect_mismatch: "The provider's effect differs from what was asked",
  effect_after_task_ended: "An irreversible effect succeeded after the task had ended",
  completed_with_open_mandatory_subtask: "Completed while a mandatory subtask is open",
};

export function describeDivergenceKind(kind: string): string {
  return kind in divergenceKindText ? divergenceKindText[kind as DivergenceKind] : kind;
}

function at(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function show(value: unknown): string {
  if (value === undefined) return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The fields a provider's record disagrees on, side by side, when the alert
 * carries them (the reconciler's effect_mismatch: `internal.request`,
 * `external.record`, `external.mismatches`). Empty for other alerts: their
 * evidence is shown as it is.
 */
export function divergenceDifferences(
  internal: unknown,
  external: unknown,
): Array<{ field: string; ours: string; theirs: string }> {
  const fields = at(external, "mismatches");
  if (!Array.isArray(fields)) return [];
  return fields
    .filter((f): f is string => typeof f === "string")
    .map((field) => {
      const ours = field === "idempotency_key" ? at(internal, "idempotency_key") : at(internal, `request.${field}`);
      return { field, ours: show(ours), theirs: show(at(external, `record.${field}`)) };
    });
}
