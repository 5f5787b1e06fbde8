import { z } from "zod";
import { canonicalJson, sha256Hex } from "@/lib/core/canonical-json";
import { isSecretName } from "@/lib/core/secret-names";

/**
 * The audit log's format, as pure functions: what an entry is, the bytes its
 * hash covers, and the checks a verifier makes. The database links the chain
 * (the insert trigger computes `audit_link_hash()`, the same function as
 * `chainHash` here; the audit_log migration's `audit_chain_hash()` until
 * the migration …_trigger_functions_plan_once renamed it, the same bytes);
 * everything that checks a chain —
 * lib/stores/audit-log.ts over the database, audit-export.ts over an export a
 * third party holds — recomputes it from these definitions.
 *
 *   content_digest = sha256hex(canonicalJson({ id, stream, at, actor,
 *                      actor_kind, action, subject_type, subject_id, task_id,
 *                      details }))
 *   hash           = sha256hex(prev_hash + "\n" + seq + "\n" + content_digest)
 *
 * `prev_hash` of the first entry of a stream is 64 zeros (GENESIS_HASH).
 */

export const GENESIS_HASH = "0".repeat(64);

/** Every kind of event the log records. Adding one is a code change, never a free-form string. */
export const auditActions = [
  "task.created",
  "task.transitioned",
  "task.restored",
  "execution.intent_recorded",
  "execution.sent",
  "execution.succeeded",
  "execution.failed",
  "execution.outcome_unknown",
  "execution.cancelled",
  "reconciliation.succeeded",
  "reconciliation.failed",
  "reconciliation.needs_human",
  "review.opened",
  "review.decided",
  // A review left the queue without a person's decision of its own: the
  // reconciler or the re-execution settled what a person had approved.
  "review.closed",
  "checkpoint.created",
  "checkpoint.restore_refused",
  "divergence.raised",
  "divergence.resolved",
  // The alerts centre's actions (lib/use-cases/alerts/divergence.ts), each a CAS on the alert.
  "divergence.acknowledged",
  "divergence.escalated",
  "divergence.reconciled",
  "auth.signed_in",
  "auth.sign_in_failed",
  // A username or an address reached the sign-in throttle's limit: one entry per block, with the count, never one per attempt.
  "auth.sign_in_throttled",
  // A person signed out: that one console session ended (details.session_id); their other sessions stay.
  "auth.signed_out",
  "auth.denied",
  "annotation.added",
  "audit.legal_hold_placed",
  "audit.legal_hold_released",
  "audit.retention_applied",
  "audit.exported",
  // A task's instruction ledger grew by one entry (lib/stores/instructions.ts).
  "instruction.recorded",
  // People (lib/use-cases/people/): each change to who may act, and the first admin's setup link.
  "user.created",
  "user.role_changed",
  "user.disabled",
  "user.enabled",
  // A person chose a new password (their other sessions ended), or an admin issued them a one-time one (all ended).
  "user.password_changed",
  "user.password_reset",
  // A person made, or no longer, a platform admin (lib/use-cases/tenants/set-platform-admin.ts): the CLI only.
  "user.platform_admin_granted",
  "user.platform_admin_revoked",
  "setup.link_issued",
  // The demo accounts removed from a database leaving the demo (npm run verity -- demo purge).
  "demo.purged",
  // An agent's API tokens (lib/stores/api-tokens.ts) and who a task's owner lets act on it (lib/stores/task-delegations.ts).
  "agent.token_issued",
  "agent.token_revoked",
  "agent.token_rotated",
  "task.delegated",
  "task.undelegated",
  // An agent with the take_over_leases scope took another agent's live lease (lib/stores/leases.ts takeOverLease).
  "lease.taken_over",
  // The tool registry (lib/stores/tool-registry.ts): a tool's version registered, a tool retired.
  "tool.registered",
  "tool.retired",
  // A worker-reconciled tool's lookup queue (lib/stores/effect-lookups.ts): queued, claimed under a lease, answered, expired.
  "lookup.queued",
  "lookup.claimed",
  "lookup.answered",
  "lookup.expired",
  // The workflow registry (lib/stores/workflow-registry.ts): a version published, or a shipped one registered at start.
  "workflow.published",
  // A running task moved to a newer version of its workflow (lib/use-cases/workflows/apply-workflow-migration.ts).
  "task.workflow_migrated",
  // A LangGraph thread kept by Verity (lib/use-cases/graph/): a checkpoint put, a task's pending writes, the thread's rows deleted.
  "graph.checkpoint_put",
  "graph.writes_put",
  "graph.thread_deleted",
  // Encryption at rest (lib/stores/data-keys.ts): a tenant's data key made, rotated; its key-encryption key rotated; all its keys destroyed.
  "keys.data_key_created",
  "keys.data_key_rotated",
  "keys.kek_rotated",
  "keys.destroyed",
  // The tenant register (lib/stores/tenants.ts): a tenant created, suspended, reactivated; each in the tenant's own chain.
  "tenant.created",
  "tenant.suspended",
  "tenant.reactivated",
  // Its keys destroyed and its data unreadable for good (lib/use-cases/tenants/delete-tenant.ts).
  "tenant.deleted",
  // A tenant's retention term for one data class set or cleared (lib/stores/retention-policies.ts).
  "retention.policy_set",
  // A person took or released an inbox item (lib/stores/inbox-claims.ts): advisory, it grants nothing.
  "inbox.claimed",
  "inbox.unclaimed",
] as const;
export type AuditAction = (typeof auditActions)[number];
export const AuditActionSchema = z.enum(auditActions);

export const auditActorKinds = ["user", "agent", "system", "anonymous"] as const;
export type AuditActorKind = (typeof auditActorKinds)[number];

export const auditSubjectTypes = [
  "task",
  "transition",
  "execution",
  "review",
  "checkpoint",
  "divergence_alert",
  "user",
  // The address a sign-in came from, when the throttle blocks it.
  "network_address",
  "permission",
  "audit_entry",
  "legal_hold",
  "audit_log",
  // A task's instruction ledger (subject id = the task id): one chain per ledger.
  "instruction_ledger",
  "setup_token",
  // The deployment as a whole (the demo accounts' purge).
  "deployment",
  "api_token",
  "task_delegation",
  // A registered tool (subject id = its name); its entries join the system stream.
  "tool",
  // A question about an effect, answered by a tool's worker (lib/stores/effect-lookups.ts).
  "effect_lookup",
  // A workflow version in the registry (subject id = its digest); its entries join the system stream.
  "workflow_version",
  // A tenant's data keys (subject id = the tenant id); never the keys themselves.
  "data_keys",
  // A tenant in the register (subject id = the tenant id).
  "tenant",
  // A tenant's retention policy (subject id = the data class).
  "retention_policy",
  // An item of the inbox (subject id = its key: review:<id>, task:<id>, gate:<task id>:<gate>, alert:<id>).
  "inbox_item",
] as const;
export type AuditSubjectType = (typeof auditSubjectTypes)[number];

export interface AuditActor {
  /** SPIFFE ID of an agent or person, `system:<component>`, or `anonymous`. */
  identity: string;
  kind: AuditActorKind;
}

/** What the log records, exactly as hashed (and as stored, column by column). */
export interface AuditContent {
  id: string;
  stream: string;
  at: Date;
  actor: string;
  actorKind: AuditActorKind;
  action: string;
  subjectType: string;
  subjectId: string;
  taskId: string | null;
  details: Record<string, unknown>;
}

/** A stored entry: its content and its place in the chain. */
export interface AuditLink extends AuditContent {
  seq: number;
  prevHash: string;
  hash: string;
}

export const AUTH_STREAM = "auth";
export const SYSTEM_STREAM = "system";

/** Subjects whose rows are written under their own compare-and-swap: each gets its own chain. */
const aggregateSubjects: ReadonlySet<AuditSubjectType> = new Set([
  "task",
  "execution",
  "review",
  "divergence_alert",
  "checkpoint",
  "instruction_ledger",
]);

/**
 * The chain an entry joins: the aggregate it records a write of
 * (`task:<id>`, `execution:<id>`, `review:<id>`, …), `auth` for sign-ins and
 * denials, `system` for the rest. A writer of an aggregate already holds its
 * row's lock when it appends, so the stream head's lock (the only lock an
 * append takes) never makes anyone wait who was not already waiting, and
 * adds no lock order that could deadlock: concurrent writers of different
 * tasks, or of a task and its execution, never wait on each other's chains.
 * A task's whole history is its entries by task_id, across these streams.
 */
export function streamFor(entry: { action: AuditAction; subject: { type: AuditSubjectType; id: string } }): string {
  if (entry.action.startsWith("auth.")) return AUTH_STREAM;
  if (aggregateSubjects.has(entry.subject.type)) return `${entry.subject.type}:${entry.subject.id}`;
  return SYSTEM_STREAM;
}

export function contentDigestOf(content: AuditContent): string {
  return sha256Hex(
    canonicalJson({
      id: content.id,
      stream: content.stream,
      at: content.at.toISOString(),
      actor: content.actor,
      actor_kind: content.actorKind,
      action: content.action,
      subject_type: content.subjectType,
      subject_id: content.subjectId,
      task_id: content.taskId,
      details: content.details,
    }),
  );
}

/** Mirrors audit_link_hash() of the migrations, byte for byte. */
export function chainHash(prevHash: string, seq: number, contentDigest: string): string {
  return sha256Hex(`${prevHash}\n${seq}\n${contentDigest}`);
}

// ---------------------------------------------------------------------------
// Details: what may go into the log.
// ---------------------------------------------------------------------------

export const REDACTED = "[redacted]";
/** Larger details are replaced by their digest: an audit write must never fail a business transaction for size. */
export const MAX_DETAILS_BYTES = 32 * 1024;

/**
 * Text as PostgreSQL will store it: no NUL (text and jsonb refuse it) and no
 * lone UTF-16 surrogate (jsonb refuses its escape). An audit write must not
 * fail its business transaction because of what someone typed.
 */
export function storableText(text: string): string {
  return text.replaceAll("\u0000", "").replace(loneSurrogate, "\ufffd");
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function storable(value: unknown, key: string | null): unknown {
  // Keys whose values are credentials wherever they appear (lib/core/secret-names.ts).
  if (key !== null && isSecretName(key) && value !== null) return REDACTED;
  if (typeof value === "string") return storableText(value);
  if (Array.isArray(value)) return value.map((v) => storable(v, null));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), storable(v, k)]));
  }
  return value;
}

/**
 * Details as they will be stored and hashed: a JSON round trip (undefined
 * dropped, dates as ISO strings), credentials redacted at any depth, text
 * made storable. What is hashed is exactly what the jsonb column gives back,
 * so verification recomputes the same digest.
 */
export function normalizeDetails(details: Record<string, unknown> | undefined): Record<string, unknown> {
  const plain = storable(JSON.parse(JSON.stringify(details ?? {})), null) as Record<string, unknown>;
  const bytes = Buffer.byteLength(canonicalJson(plain), "utf8");
  if (bytes <= MAX_DETAILS_BYTES) return plain;
  return { details_omitted: "larger than the audit log keeps", bytes, sha256: sha256Hex(canonicalJson(plain)) };
}

// ---------------------------------------------------------------------------
// Verification of a sequence of links (one stream, in seq order).
// ---------------------------------------------------------------------------

export type AuditBreakKind =
  /** A field, the content digest or the hash of this entry is not what was written. */
  | "entry_edited"
  /** prev_hash does not match the hash of the entry before: something was inserted or re-linked. */
  | "link_broken"
  /** seq jumps: entries were deleted (or never committed by the chain trigger). */
  | "entries_missing"
  /** An entry the chain does not account for: past the stream's head, below its retention anchor, or in a stream without a head. */
  | "entry_unexpected"
  /** The last entry is not the one the stream's head recorded. */
  | "head_mismatch"
  /** The retention anchor disagrees with the audit.retention_applied entry that made it. */
  | "anchor_mismatch";

export interface AuditBreak {
  stream: string;
  seq: number;
  entryId: string | null;
  kind: AuditBreakKind;
  expected: string;
  found: string;
  message: string;
}

/**
 * Walks one stream's entries, handed over in seq order (possibly in pages),
 * and keeps the first break. The caller says where the stream starts (1 and
 * the genesis hash, or the retention anchor) and, at the end, where its head
 * is. Pure: the database walk and the export verifier both use it.
 */
export class StreamVerifier {
  private expectedSeq: number;
  private expectedPrev: string;
  private lastSeen: AuditLink | null = null;
  entries = 0;
  firstBreak: AuditBreak | null = null;

  constructor(
    readonly stream: string,
    start: { afterSeq: number; prevHash: string } = { afterSeq: 0, prevHash: GENESIS_HASH },
    /** Exports are filtered: a gap there is expected, not a deletion. */
    private readonly gapsAllowed = false,
  ) {
    this.expectedSeq = start.afterSeq + 1;
    this.expectedPrev = start.prevHash;
  }

  /** Checks one entry; `storedDigest` is the content_digest column when there is one (the database). */
  add(link: AuditLink, storedDigest?: string): void {
    this.entries += 1;
    const previous = this.lastSeen;
    this.lastSeen = link;
    if (this.firstBreak) return;
    const at = (kind: AuditBreakKind, expected: string, found: string, message: string) => {
      this.firstBreak = { stream: this.stream, seq: link.seq, entryId: link.id, kind, expected, found, message };
    };
    if (link.seq < this.expectedSeq) {
      return at(
        "entry_unexpected",
        `seq ≥ ${this.expectedSeq}`,
        `seq ${link.seq}`,
        `Entry ${link.id} has seq ${link.seq}, which this stream should not have any more (it starts after ${this.expectedSeq - 1}).`,
      );
    }
    const gap = link.seq > this.expectedSeq;
    if (gap && !this.gapsAllowed) {
      const missing =
        link.seq - this.expectedSeq === 1 ? `seq ${this.expectedSeq}` : `seq ${this.expectedSeq}–${link.seq - 1}`;
      return at(
        "entries_missing",
        `seq ${this.expectedSeq}`,
        `seq ${link.seq}`,
        `Stream ${this.stream} is missing ${missing}: entry ${link.id} follows seq ${this.expectedSeq - 1}.`,
      );
    }
    const digest = contentDigestOf(link);
    if (storedDigest !== undefined && storedDigest !== digest) {
      return at(
        "entry_edited",
        digest,
        storedDigest,
        `Entry ${link.id} (seq ${link.seq}) was changed after it was written: its fields hash to ${digest}, the stored content digest is ${storedDigest}.`,
      );
    }
    // Across a gap (filtered export) the previous hash is unknown: only the entry's own hash can be checked.
    if (!gap && link.prevHash !== this.expectedPrev) {
      const after = previous ? `entry ${previous.id} (seq ${previous.seq})` : "the start of the stream";
      return at(
        "link_broken",
        this.expectedPrev,
        link.prevHash,
        `Entry ${link.id} (seq ${link.seq}) does not link to ${after}: prev_hash is ${link.prevHash}, expected ${this.expectedPrev}.`,
      );
    }
    const hash = chainHash(link.prevHash, link.seq, storedDigest ?? digest);
    if (hash !== link.hash) {
      return at(
        "entry_edited",
        hash,
        link.hash,
        `Entry ${link.id} (seq ${link.seq}) does not hash to its stored hash: expected ${hash}, found ${link.hash}.`,
      );
    }
    this.expectedSeq = link.seq + 1;
    this.expectedPrev = link.hash;
  }

  /** The stream's head as recorded when the walk began: the last entry must be it. */
  finish(head: { lastSeq: number; lastHash: string } | null): AuditBreak | null {
    if (this.firstBreak) return this.firstBreak;
    const last = this.lastSeen;
    if (!head) {
      this.firstBreak = {
        stream: this.stream,
        seq: last?.seq ?? 0,
        entryId: last?.id ?? null,
        kind: "entry_unexpected",
        expected: "a stream head",
        found: "none",
        message: `Stream ${this.stream} has entries but no head: they were not written through the chain trigger.`,
      };
    } else if (this.expectedSeq - 1 < head.lastSeq) {
      this.firstBreak = {
        stream: this.stream,
        seq: this.expectedSeq,
        entryId: null,
        kind: "entries_missing",
        expected: `seq ${head.lastSeq}`,
        found: last ? `seq ${this.expectedSeq - 1}` : "no entries",
        message: `Stream ${this.stream} ends at seq ${this.expectedSeq - 1} but its head says ${head.lastSeq}: seq ${this.expectedSeq}–${head.lastSeq} were deleted.`,
      };
    } else if (this.expectedSeq - 1 > head.lastSeq && last) {
      this.firstBreak = {
        stream: this.stream,
        seq: last.seq,
        entryId: last.id,
        kind: "entry_unexpected",
        expected: `seq ${head.lastSeq}`,
        found: `seq ${last.seq}`,
        message: `Stream ${this.stream} has entries after its head (seq ${head.lastSeq}): entry ${last.id} at seq ${last.seq} was not written through the chain trigger.`,
      };
    } else if (head.lastSeq > 0 && this.expectedPrev !== head.lastHash && last) {
      this.firstBreak = {
        stream: this.stream,
        seq: last.seq,
        entryId: last.id,
        kind: "head_mismatch",
        expected: head.lastHash,
        found: this.expectedPrev,
        message: `The last entry of stream ${this.stream} (seq ${last.seq}) hashes to ${this.expectedPrev}, but the head recorded ${head.lastHash}.`,
      };
    }
    return this.firstBreak;
  }

  get lastSeq(): number {
    return this.expectedSeq - 1;
  }
}

/** One entry to append: what happened, who did it, to what. Built by audit-events.ts, stored by lib/stores/audit-log.ts. */
export interface AuditEntryInput {
  action: AuditAction;
  actor: AuditActor;
  subject: { type: AuditSubjectType; id: string };
  /** The task the entry is about, whatever its subject: a task's history is its entries by task_id. */
  taskId?: string | null;
  /** Never secrets: credential-named keys are redacted (audit-chain.ts normalizeDetails). */
  details?: Record<string, unknown>;
  /** When the recorded change happened (a transition's own timestamp); now when left out. */
  at?: Date;
}
