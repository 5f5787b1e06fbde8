import type { AuditBreak } from "@/lib/model/audit/audit-chain";
import type { AuditEntry, AuditVerification } from "@/lib/stores/audit-log";
import type { ReviewDecisionKind } from "@/lib/stores/review-store";
import { auditEventKindLabels, kindOfAction, type AuditEventKind } from "@/lib/use-cases/audit/audit-search";
import { formatInteger, pluralize } from "@/lib/adapters/console/shared/format";

/**
 * Audit entries in words, for the task history and the audit search: what
 * happened, from → to (status and version), and links to the console pages
 * that exist for what the entry names (reviews, checkpoints, tasks). Pure:
 * the JSON routes send these rows, the pages render them.
 */

export interface AuditLinkView {
  href: string;
  label: string;
}

export interface AuditRowView {
  id: string;
  stream: string;
  seq: number;
  /** ISO 8601. */
  at: string;
  actor: string;
  actorKind: string;
  action: string;
  kind: AuditEventKind;
  kindLabel: string;
  /** What happened, in words. */
  title: string;
  /** The reason, note or message that came with it. */
  detail: string | null;
  fromStatus: string | null;
  toStatus: string | null;
  fromVersion: number | null;
  toVersion: number | null;
  taskId: string | null;
  links: AuditLinkView[];
}

const str = (d: Record<string, unknown>, key: string): string | null => {
  const v = d[key];
  return typeof v === "string" && v !== "" ? v : null;
};
const num = (d: Record<string, unknown>, key: string): number | null => {
  const v = d[key];
  return typeof v === "number" && Number.isFinite(v) ? v : null;
};

export const taskHref = (id: string) => `/tasks/${encodeURIComponent(id)}`;
export const taskHistoryHref = (id: string) => `/tasks/${encodeURIComponent(id)}/history`;
const reviewHref = (id: string) => `/reviews/${encodeURIComponent(id)}`;
const checkpointHref = (id: string) => `/checkpoints/${encodeURIComponent(id)}`;

const executionWords: Record<string, string> = {
  "execution.intent_recorded": "intent recorded",
  "execution.sent": "sent to the provider",
  "execution.succeeded": "succeeded, with evidence",
  "execution.failed": "failed: the provider did nothing",
  "execution.outcome_unknown": "outcome unknown",
  "execution.cancelled": "cancelled before it was sent",
  "reconciliation.succeeded": "reconciled: the provider has the effect",
  "reconciliation.failed": "reconciled: the provider has no such effect, safe to retry",
  "reconciliation.needs_human": "reconciliation could not tell: frozen for a person",
};

const decisionWords: Record<ReviewDecisionKind, string> & Record<string, string | undefined> = {
  approve_execute: "approved: execute again under the same key",
  approve_accept_evidence: "approved: accept the provider's evidence",
  approve_compensate: "approved: accept the provider's evidence and compensate it",
  reject: "rejected",
  escalate: "escalated",
};

function titleOf(
  e: AuditEntry,
  d: Record<string, unknown>,
  links: AuditLinkView[],
): { title: string; detail: string | null } {
  const reason = str(d, "reason");
  switch (e.action) {
    case "task.created":
      return {
        title: `Task created in ${str(d, "to_status") ?? "its first state"}`,
        detail: reason === "created" ? null : reason,
      };
    case "task.transitioned": {
      const from = str(d, "from_status");
      const to = str(d, "to_status");
      return {
        title: from !== null && from === to ? `Updated in place in ${to}` : `Moved from ${from ?? "?"} to ${to ?? "?"}`,
        detail: reason,
      };
    }
    case "task.restored": {
      const checkpoint = str(d, "checkpoint_id");
      if (checkpoint) links.push({ href: checkpointHref(checkpoint), label: "Checkpoint" });
      const rewind = d.rewind === true ? " (a rewind)" : "";
      return { title: `Restored from checkpoint ${checkpoint ?? ""}${rewind}`.replace("  ", " "), detail: reason };
    }
    case "checkpoint.restore_refused": {
      const checkpoint = str(d, "checkpoint_id");
      if (checkpoint) links.push({ href: checkpointHref(checkpoint), label: "Checkpoint" });
      return { title: `Restore refused${str(d, "refusal") ? `: ${str(d, "refusal")}` : ""}`, detail: reason };
    }
    case "checkpoint.created":
      links.push({ href: checkpointHref(e.subjectId), label: "Checkpoint" });
      return {
        title: `Checkpoint of version ${num(d, "state_version") ?? "?"} taken${str(d, "trigger") ? ` (${str(d, "trigger")!.replaceAll("_", " ")})` : ""}`,
        detail: null,
      };
    case "review.opened":
      links.push({ href: reviewHref(e.subjectId), label: "Review" });
      return {
        title: `Review opened, round ${num(d, "round") ?? 1}${num(d, "required_approvals") === 2 ? " (four eyes)" : ""}`,
        detail: reason,
      };
    case "review.decided": {
      links.push({ href: reviewHref(e.subjectId), label: "Review" });
      const decision = str(d, "decision") ?? "";
      return {
        title: `Review ${decisionWords[decision] ?? decision.replaceAll("_", " ")}${str(d, "status_after") ? `; the review is ${str(d, "status_after")}` : ""}`,
        detail: reason,
      };
    }
    case "review.closed":
      links.push({ href: reviewHref(e.subjectId), label: "Review" });
      return {
        title: `Review closed by the system${str(d, "status_after") ? ` (${str(d, "status_after")})` : ""}`,
        detail: str(d, "note"),
      };
    case "divergence.raised":
      return {
        title: `Alert raised: ${(str(d, "kind") ?? "divergence").replaceAll("_", " ")}${str(d, "severity") ? ` (${str(d, "severity")})` : ""}`,
        detail: str(d, "message"),
      };
    case "divergence.resolved":
      return {
        title: `Alert resolved: ${(str(d, "kind") ?? "divergence").replaceAll("_", " ")}`,
        detail: str(d, "resolution"),
      };
    case "auth.signed_in":
      return { title: `Signed in${str(d, "role") ? ` as ${str(d, "role")}` : ""}`, detail: null };
    case "auth.sign_in_failed":
      return { title: `Sign-in failed for “${str(d, "username") ?? "?"}”`, detail: null };
    case "auth.sign_in_throttled":
      return {
        title: `Sign-in blocked for ${str(d, "scope") === "address" ? "address" : "username"} “${e.subjectId}” after ${num(d, "failures") ?? "?"} failures`,
        detail: str(d, "blocked_until") ? `until ${str(d, "blocked_until")}` : null,
      };
    case "auth.signed_out":
      return { title: "Signed out", detail: null };
    case "auth.denied":
      return { title: `Denied ${e.subjectId}`, detail: str(d, "where") };
    case "audit.exported":
      return { title: `Audit log exported as ${str(d, "format") ?? "a file"}`, detail: null };
    case "annotation.added":
      return { title: "Correction annotated", detail: str(d, "note") };
    case "audit.legal_hold_placed":
      return { title: "Legal hold placed", detail: reason };
    case "audit.legal_hold_released":
      return { title: "Legal hold released", detail: reason };
    case "audit.retention_applied":
      return { title: "Retention applied", detail: null };
  }
  const words = executionWords[e.action];
  if (words) {
    const tool = str(d, "tool");
    const attempt = num(d, "attempt");
    return {
      title: `${tool ?? "Execution"} ${words}${attempt && attempt > 1 ? ` (attempt ${attempt})` : ""}`,
      detail: reason,
    };
  }
  return {
    title: e.action.replaceAll("_", " ").replace(".", ": "),
    detail: reason ?? str(d, "note") ?? str(d, "message"),
  };
}

export function describeAuditEntry(e: AuditEntry): AuditRowView {
  const d = e.details ?? {};
  const links: AuditLinkView[] = [];
  const { title, detail } = titleOf(e, d, links);
  const kind = kindOfAction(e.action);
  const isTaskMove = e.subjectType === "task";
  const isExecution = e.subjectType === "execution";
  const fromStatus = isTaskMove || isExecution ? str(d, "from_status") : null;
  const toStatus = isTaskMove || isExecution ? str(d, "to_status") : null;
  return {
    id: e.id,
    stream: e.stream,
    seq: e.seq,
    at: e.at.toISOString(),
    actor: e.actor,
    actorKind: e.actorKind,
    action: e.action,
    kind,
    kindLabel: auditEventKindLabels[kind],
    title,
    detail,
    fromStatus,
    toStatus,
    fromVersion: isTaskMove ? num(d, "from_version") : null,
    toVersion: isTaskMove ? num(d, "to_version") : null,
    taskId: e.taskId,
    links,
  };
}

/** The first broken link in words: the stream, the entry, what was found. */
export function describeBreak(b: AuditBreak): string {
  const where = b.entryId ? `entry ${b.entryId} (seq ${b.seq}) of ${b.stream}` : `seq ${b.seq} of ${b.stream}`;
  const what: Record<AuditBreak["kind"], string> = {
    entry_edited: "was changed after it was written",
    link_broken: "does not link to the entry before it",
    entries_missing: "is missing: entries were deleted",
    entry_unexpected: "was not written through the chain",
    head_mismatch: "is not the last entry the stream's head recorded",
    anchor_mismatch: "does not match the retention cut that made it",
  };
  return `Broken at ${where}: it ${what[b.kind]}.`;
}

/** "Verified — N streams, M entries" or the first break, for the badges and the verify panel. */
export function describeVerification(v: AuditVerification): { ok: boolean; headline: string; detail: string | null } {
  if (v.ok)
    return {
      ok: true,
      headline: `Verified — ${pluralize(v.streams, "stream")}, ${pluralize(v.entries, "entry", "entries")}`,
      detail: null,
    };
  const first = v.firstBreak!;
  return {
    ok: false,
    headline: `Broken — ${describeBreak(first)}`,
    detail: `${first.message}${v.breaks.length > 1 ? ` ${formatInteger(v.breaks.length - 1)} more stream${v.breaks.length > 2 ? "s are" : " is"} broken.` : ""}`,
  };
}

/**
 * What the console's verify routes answer: the words, the counts, when, and
 * the first break. `tenantId`: the whole log was walked, which is that
 * tenant's chain and no other's (row-level security), and the words say so.
 */
export function verificationAnswer(v: AuditVerification, tenantId?: string) {
  const words = describeVerification(v);
  return {
    ok: v.ok,
    headline: tenantId
      ? `Audit chain of tenant ${tenantId} ${words.headline.replace(/^Verified/, "verified").replace(/^Broken/, "broken")}`
      : words.headline,
    tenant_id: tenantId ?? null,
    detail: words.detail,
    streams: v.streams,
    entries: v.entries,
    checked_at: v.checkedAt.toISOString(),
    first_break: v.firstBreak,
  };
}
