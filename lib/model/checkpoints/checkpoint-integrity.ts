import { isSealed } from "@/lib/core/envelope-encryption";
import { canonicalJson } from "@/lib/core/canonical-json";
import { classesIn, taskStateClassifier } from "@/lib/model/data-classes";
import { canonicalCheckpointJson, canonicalDigest } from "@/lib/model/checkpoints/checkpoint-canonical";
import { signPayload, verifyPayloadSignature, type CheckpointKeyring } from "@/lib/model/checkpoints/checkpoint-keys";
import { delegationHashOf } from "@/lib/model/checkpoints/checkpoint-policy";
import { redactForCheckpoint } from "@/lib/model/checkpoints/checkpoint-redaction";
import {
  CHECKPOINT_SCHEMA_VERSION,
  CheckpointDocumentSchema,
  CheckpointSchemaError,
  snapshotUriOf,
  upgradeCheckpointDocument,
  type CheckpointDocument,
  type CheckpointTrigger,
  type ParsedCheckpoint,
  type PendingWork,
  MAX_CHECKPOINT_RECEIPTS,
} from "@/lib/model/checkpoints/checkpoint-schema";
import { TaskStateSchema, type TaskState } from "@/lib/model/tasks/task-state";
import { checkStateInvariants } from "@/lib/model/tasks/transition-rules";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import type { IntegrityCheckName } from "@/lib/model/checkpoints/checkpoint-schema";
import type { IntegrityCheck, IntegrityReport } from "@/lib/model/checkpoints/checkpoint-reports";

/**
 * Verification of a stored checkpoint, from the stored bytes alone: nothing
 * here trusts a column without checking it against the signed payload. Every
 * check runs (where the payload can be read at all) and is reported, so the
 * inspector can say "digest ok, signature FAILED: …" rather than just "bad".
 */
export interface StoredCheckpoint {
  id: string;
  taskId: string;
  stateVersion: number;
  schemaVersion: string;
  trigger: string;
  payload: string;
  snapshotDigest: string;
  signature: string;
  keyId: string;
  createdAt: Date;
  createdBy: string;
}

export interface VerifiedCheckpoint {
  report: IntegrityReport;
  /** The document, upgraded; null when the payload does not parse or fails its schema. */
  parsed: ParsedCheckpoint | null;
}

/** The task the checkpoint is checked against: its id and the workflow digest it is pinned to. */
export interface VerificationContext {
  task: { id: string; workflowDigest: string } | null;
}

export function verifyStoredCheckpoint(
  row: StoredCheckpoint,
  keyring: CheckpointKeyring,
  context: VerificationContext,
): VerifiedCheckpoint {
  const checks: IntegrityCheck[] = [];
  const add = (check: IntegrityCheckName, ok: boolean, message: string) => checks.push({ check, ok, message });

  let raw: unknown;
  let parsedJson = false;
  try {
    raw = JSON.parse(row.payload);
    parsedJson = true;
    add("payload_parses", true, `${row.payload.length} characters of JSON`);
  } catch (error) {
    add(
      "payload_parses",
      false,
      isSealed(row.payload)
        ? "the payload is sealed at rest and does not open: its stored bytes were altered, or it was sealed by another database"
        : `the stored payload is not JSON: ${(error as Error).message}`,
    );
  }

  if (parsedJson) {
    const hasSignature = isObject(raw) && isObject(raw.integrity) && "signature" in raw.integrity;
    const canonical = canonicalJson(raw) === row.payload;
    add(
      "payload_canonical",
      canonical && !hasSignature,
      hasSignature
        ? "the payload carries its own signature; the signed bytes never do"
        : canonical
          ? "canonical JSON"
          : "the payload is not in canonical form (sorted keys, no whitespace)",
    );
  } else {
    add("payload_canonical", false, "not checked: the payload is unreadable");
  }

  let parsed: ParsedCheckpoint | null = null;
  if (parsedJson) {
    try {
      parsed = upgradeCheckpointDocument(raw);
      add(
        "schema",
        true,
        parsed.upgradedFrom.length > 0
          ? `${parsed.storedSchemaVersion}, upgraded on read from ${parsed.upgradedFrom.join(" and ")}`
          : `${parsed.storedSchemaVersion}`,
      );
    } catch (error) {
      if (!(error instanceof CheckpointSchemaError)) throw error;
      add("schema", false, error.message);
    }
  } else {
    add("schema", false, "not checked: the payload is unreadable");
  }

  // The digest is over the snapshot as stored (before any upgrade), so it is
  // checked from the raw document even when the schema check failed.
  const storedSnapshot = parsed ? parsed.storedSnapshot : isObject(raw) ? raw.state_snapshot : undefined;
  const claimedDigest = parsed
    ? parsed.document.integrity.snapshot_digest
    : isObject(raw) && isObject(raw.integrity)
      ? raw.integrity.snapshot_digest
      : undefined;
  if (storedSnapshot === undefined || typeof claimedDigest !== "string") {
    add("snapshot_digest", false, "not checked: no snapshot or no recorded digest in the payload");
  } else {
    let actual: string | null = null;
    try {
      actual = canonicalDigest(storedSnapshot);
    } catch {
      actual = null;
    }
    add(
      "snapshot_digest",
      actual === claimedDigest,
      actual === claimedDigest
        ? `sha256 of the snapshot matches ${short(claimedDigest)}`
        : `sha256 of the snapshot is ${actual ? short(actual) : "not computable"}, the checkpoint says ${short(claimedDigest)}`,
    );
  }

  const signature = verifyPayloadSignature(row.payload, row.signature, row.keyId, keyring);
  add("signature", signature.ok, signature.message);

  if (parsed) {
    const doc = parsed.document;
    const mismatches = [
      doc.checkpoint_id !== row.id && "id",
      doc.task_id !== row.taskId && "task_id",
      doc.state_version !== row.stateVersion && "state_version",
      parsed.storedSchemaVersion !== row.schemaVersion && "schema_version",
      doc.trigger !== row.trigger && "trigger",
      doc.integrity.snapshot_digest !== row.snapshotDigest && "snapshot_digest",
      doc.integrity.key_id !== row.keyId && "key_id",
      doc.created_by !== row.createdBy && "created_by",
      Date.parse(doc.created_at) !== row.createdAt.getTime() && "created_at",
    ].filter((m): m is string => typeof m === "string");
    add(
      "columns_match",
      mismatches.length === 0,
      mismatches.length === 0
        ? "every column agrees with the signed payload"
        : `column(s) ${mismatches.join(", ")} disagree with the signed payload`,
    );
  } else {
    add("columns_match", false, "not checked: the payload is unreadable");
  }

  const def = parsed ? getWorkflowByDigest(parsed.document.workflow_definition_digest) : undefined;
  if (parsed) {
    const doc = parsed.document;
    const state = doc.state_snapshot;
    const problems = [
      state.task_id !== doc.task_id && `the snapshot is of task ${state.task_id}`,
      state.version !== doc.state_version && `the snapshot is version ${state.version}, not ${doc.state_version}`,
      state.workflow_digest !== doc.workflow_definition_digest && "the snapshot is pinned to another workflow digest",
      ...(def ? checkStateInvariants(def, state).map((v) => `${v.invariant}: ${v.message}`) : []),
    ].filter((p): p is string => typeof p === "string");
    add(
      "snapshot_valid",
      problems.length === 0,
      problems.length === 0
        ? `TaskState v2, invariants hold (${state.status}, version ${state.version})`
        : problems.join("; "),
    );
  } else {
    add("snapshot_valid", false, "not checked: the payload is unreadable");
  }

  if (!parsed) {
    add("workflow_compatible", false, "not checked: the payload is unreadable");
  } else if (!def) {
    add(
      "workflow_compatible",
      false,
      `workflow definition ${short(parsed.document.workflow_definition_digest)} is not known to this server`,
    );
  } else if (context.task && context.task.workflowDigest !== def.digest) {
    add(
      "workflow_compatible",
      false,
      `the checkpoint is of ${def.name} v${def.version}; the task is pinned to ${short(context.task.workflowDigest)}`,
    );
  } else if (context.task && context.task.id !== parsed.document.task_id) {
    add("workflow_compatible", false, `the checkpoint is of task ${parsed.document.task_id}, not ${context.task.id}`);
  } else {
    add("workflow_compatible", true, `${def.name} v${def.version}, the definition the task is pinned to`);
  }

  return {
    report: {
      ok: checks.every((c) => c.ok),
      checks,
      storedSchemaVersion:
        parsed?.storedSchemaVersion ??
        (isObject(raw) && typeof raw.schema_version === "string" ? raw.schema_version : null),
      upgradedFrom: parsed?.upgradedFrom ?? [],
    },
    parsed,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

function short(digest: string): string {
  return digest.length > 20 ? `${digest.slice(0, 19)}…` : digest;
}

/** What a checkpoint records, gathered by lib/stores/checkpoint-store.ts in the transaction that takes it. */
export interface CheckpointFacts {
  checkpointId: string;
  trigger: CheckpointTrigger;
  createdAt: Date;
  createdBy: string;
  task: { id: string; workflowDigest: string; intentId: string; createdBy: string };
  /** The committed, validated state being captured. */
  state: TaskState;
  /** The request digest of the task's creation. */
  inputDigest: string;
  lease: { holder: string; fencingToken: string } | null;
  undeliveredMessageIds: readonly string[];
  receiptIds: readonly string[];
  lastMessageId: string | null;
  policyVersion: string;
}

export interface SealedCheckpoint {
  row: StoredCheckpoint;
  document: CheckpointDocument;
}

/** The outbox is Verity's own worker; it shows in pending work as this identity. */
export const OUTBOX_AGENT_ID = "spiffe://verity.local/system/outbox";

/** Refused: the state is not one a checkpoint may capture. */
export class CheckpointRefusedError extends Error {
  /** The invariant the refusal names: checkpoint_of_valid_state unless a more precise one says why. */
  constructor(
    message: string,
    readonly invariant: "checkpoint_of_valid_state" | "checkpoint_receipts_within_bound" = "checkpoint_of_valid_state",
  ) {
    super(message);
    this.name = "CheckpointRefusedError";
  }
}

/**
 * Builds, redacts, validates and signs a checkpoint document. The state is
 * validated again here, after redaction, against TaskState v2 and the
 * invariants of its workflow: a checkpoint is never of unvalidated state
 * ("checkpointing before validation: poison resumes").
 */
export function sealCheckpoint(facts: CheckpointFacts, keyring: CheckpointKeyring): SealedCheckpoint {
  const def = getWorkflowByDigest(facts.task.workflowDigest);
  if (!def)
    throw new CheckpointRefusedError(
      `Task ${facts.task.id} is pinned to workflow digest ${facts.task.workflowDigest}, which this server does not have.`,
    );
  // Said here in the task's words: the schema's check below would refuse it as "Too big".
  if (facts.receiptIds.length > MAX_CHECKPOINT_RECEIPTS)
    throw new CheckpointRefusedError(
      `Task ${facts.task.id} has ${facts.receiptIds.length} tool receipts, and a checkpoint lists at most ${MAX_CHECKPOINT_RECEIPTS}: no checkpoint can be taken for it, so no irreversible call can be made in it. Continue the work in a new task.`,
      "checkpoint_receipts_within_bound",
    );
  const redacted = redactForCheckpoint(facts.state, "state_snapshot");
  const state = assertCapturable(def, redacted.value, facts);
  const activeAgents = state.active_agents.filter((a) => a !== facts.lease?.holder);
  const pendingWork: PendingWork[] = [
    ...(facts.lease
      ? [{ agent_id: facts.lease.holder, lease_id: `lease:${facts.task.id}:${facts.lease.fencingToken}` }]
      : []),
    ...activeAgents.map((agent_id) => ({ agent_id })),
    ...facts.undeliveredMessageIds.map((message_id) => ({ agent_id: OUTBOX_AGENT_ID, message_id })),
  ];
  const hasArtifacts = Object.values(state.artifacts).some((v) => v !== undefined);
  const snapshotDigest = canonicalDigest(state);
  const unsigned: CheckpointDocument = {
    schema_version: CHECKPOINT_SCHEMA_VERSION,
    checkpoint_id: facts.checkpointId,
    task_id: facts.task.id,
    state_version: state.version,
    trigger: facts.trigger,
    created_at: facts.createdAt.toISOString(),
    created_by: facts.createdBy,
    workflow_definition_digest: def.digest,
    input_digest: facts.inputDigest,
    ...(hasArtifacts ? { output_digest: canonicalDigest(state.artifacts) } : {}),
    state_snapshot_uri: snapshotUriOf(facts.checkpointId),
    state_snapshot: state,
    pending_work: pendingWork,
    tool_receipt_ids: [...facts.receiptIds],
    budget_consumed: {
      currency_usd: state.budget.currency_spent_usd,
      tokens: state.budget.tokens_spent,
      hops: state.budget.hops_used,
    },
    provenance: {
      last_message_id: facts.lastMessageId ?? "",
      delegation_hash: delegationHashOf({
        intentId: facts.task.intentId,
        createdBy: facts.task.createdBy,
        activeAgents: state.active_agents,
        leaseHolder: facts.lease?.holder ?? null,
      }),
      policy_version: facts.policyVersion,
    },
    redactions: redacted.redactions,
    data_classes: classesIn(state, taskStateClassifier(def.data_classes)),
    integrity: { snapshot_digest: snapshotDigest, key_id: keyring.activeKeyId },
  };
  const checked = CheckpointDocumentSchema.safeParse(unsigned);
  if (!checked.success)
    throw new CheckpointRefusedError(
      `The checkpoint document does not match its schema: ${checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  const payload = canonicalCheckpointJson(unsigned);
  const { signature, keyId } = signPayload(payload, keyring);
  return {
    row: {
      id: facts.checkpointId,
      taskId: facts.task.id,
      stateVersion: state.version,
      schemaVersion: CHECKPOINT_SCHEMA_VERSION,
      trigger: facts.trigger,
      payload,
      snapshotDigest,
      signature,
      keyId,
      createdAt: facts.createdAt,
      createdBy: facts.createdBy,
    },
    document: { ...unsigned, integrity: { ...unsigned.integrity, signature } },
  };
}

function assertCapturable(def: WorkflowDefinition, state: TaskState, facts: CheckpointFacts): TaskState {
  const shape = TaskStateSchema.safeParse(state);
  if (!shape.success)
    throw new CheckpointRefusedError(
      `The state of task ${facts.task.id} does not match TaskState v2; it is not checkpointed.`,
    );
  const violations = checkStateInvariants(def, shape.data);
  if (violations.length > 0) {
    throw new CheckpointRefusedError(
      `The state of task ${facts.task.id} breaks ${violations.map((v) => v.invariant).join(", ")}; it is not checkpointed.`,
    );
  }
  if (shape.data.task_id !== facts.task.id || shape.data.workflow_digest !== def.digest) {
    throw new CheckpointRefusedError(`The state handed in is not task ${facts.task.id}'s under its pinned workflow.`);
  }
  return shape.data;
}
