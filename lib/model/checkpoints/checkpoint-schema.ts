import { z } from "zod";
import { dataClasses } from "@/lib/model/data-classes";
import { clientIdSchema } from "@/lib/core/validation";
import {
  BudgetSchema,
  GatesSchema,
  ArtifactsSchema,
  IdentitySchema,
  TASK_STATE_SCHEMA_VERSION,
  TaskStateSchema,
  type TaskState,
} from "@/lib/model/tasks/task-state";

/**
 * The spec's Checkpoint v2 as strict zod schemas, the older shapes it is
 * upgraded from, and the migrator. Pure (no database, no keys): the console
 * may import the types and constants of this file into client components.
 *
 * Versions this server reads:
 *   oaies.checkpoint.v2   the current document (below)
 *   oaies.checkpoint.v1   the first format: no pending work, no provenance, no
 *                         hop count, no trigger; upgraded on read
 *   oaies.task-state.v2   the current TaskState (lib/model/tasks/task-state.ts)
 *   oaies.task-state.v1   TaskState before subtasks and hop counting;
 *                         upgraded on read with no subtasks and 0 hops
 * Anything else is refused with an error naming the version: guessing at an
 * unknown shape is how a poisoned resume starts.
 */
export const CHECKPOINT_SCHEMA_VERSION = "oaies.checkpoint.v2";
export const CHECKPOINT_SCHEMA_VERSION_V1 = "oaies.checkpoint.v1";
export const TASK_STATE_SCHEMA_VERSION_V1 = "oaies.task-state.v1";

/**
 * The most receipt ids one checkpoint lists: a bound on what a shipped
 * checkpoint may hold. A document lists every receipt of its task, so a task
 * with more can take no checkpoint (docs/cost-growth.md, "Still growing with
 * the total"; sealCheckpoint refuses it in words).
 */
export const MAX_CHECKPOINT_RECEIPTS = 10_000;

export const knownCheckpointSchemaVersions = [CHECKPOINT_SCHEMA_VERSION, CHECKPOINT_SCHEMA_VERSION_V1] as const;
export const knownTaskStateSchemaVersions = [TASK_STATE_SCHEMA_VERSION, TASK_STATE_SCHEMA_VERSION_V1] as const;

/**
 * Why a checkpoint was taken. Automatic ones are taken inside the
 * transaction of the change that reached the boundary; `on_demand` by a
 * person or an agent through the API or the console.
 */
export const checkpointTriggers = [
  "on_demand",
  "gate_opened",
  "artifacts_validated",
  "before_irreversible_effect",
  "escalated",
  "cancelled",
  "terminal",
  "state_boundary",
] as const;
export const CheckpointTriggerSchema = z.enum(checkpointTriggers);
export type CheckpointTrigger = z.infer<typeof CheckpointTriggerSchema>;

export const checkpointTriggerDescriptions: Record<CheckpointTrigger, string> = {
  on_demand: "Taken on request",
  gate_opened: "A gate became true",
  artifacts_validated: "Artifacts changed and the state was validated",
  before_irreversible_effect: "Before an irreversible effect (with its intent)",
  escalated: "Escalated to a person",
  cancelled: "Cancelled",
  terminal: "Reached a terminal state",
  state_boundary: "Entered a state its workflow declares a checkpoint boundary",
};

/** What verification checks, in the order it reports them (lib/model/checkpoints/checkpoint-integrity.ts). */
export const integrityCheckNames = [
  "payload_parses",
  "payload_canonical",
  "schema",
  "snapshot_digest",
  "signature",
  "columns_match",
  "snapshot_valid",
  "workflow_compatible",
] as const;
export type IntegrityCheckName = (typeof integrityCheckNames)[number];

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, "must be sha256:<64 hex digits>");
const checkpointId = clientIdSchema;
const keyId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "must be 1-64 characters: letters, digits, . _ -");
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const PendingWorkSchema = z.strictObject({
  agent_id: z.string().min(1).max(256),
  lease_id: z.string().min(1).max(256).optional(),
  message_id: z.string().min(1).max(256).optional(),
});
export type PendingWork = z.infer<typeof PendingWorkSchema>;

export const BudgetConsumedSchema = z.strictObject({
  currency_usd: z.number().finite().min(0).max(1e12),
  tokens: count,
  hops: count,
});

export const ProvenanceSchema = z.strictObject({
  /** The newest inbox event or outbox message of the task; "" when it has none. */
  last_message_id: z.string().max(256),
  /** sha256 of who the work is delegated to: intent, creator, active agents, lease holder. */
  delegation_hash: digest,
  /** The permission table and review policy in force (lib/model/checkpoints/checkpoint-policy.ts). */
  policy_version: z.string().min(1).max(128),
});

export const redactionKinds = [
  "api_token",
  "secret_key",
  "bearer",
  "jwt",
  "cloud_key",
  "private_key",
  "credential",
  "reasoning",
] as const;
export const RedactionSchema = z.strictObject({
  /** JSON path of the value that was redacted, e.g. `state_snapshot.artifacts.review_report`. */
  path: z.string().max(512),
  kind: z.enum(redactionKinds),
});
export type Redaction = z.infer<typeof RedactionSchema>;

export const IntegritySchema = z.strictObject({
  /** sha256 of the canonical JSON bytes of state_snapshot. */
  snapshot_digest: digest,
  /** Which key signed it: keys rotate, old checkpoints verify with their own. */
  key_id: keyId,
  /** HMAC-SHA256 (hex) of the stored payload; not part of the signed bytes themselves. */
  signature: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});

function documentV2<S extends z.ZodType>(snapshot: S) {
  return z.strictObject({
    schema_version: z.literal(CHECKPOINT_SCHEMA_VERSION),
    checkpoint_id: checkpointId,
    task_id: z.string().min(1).max(128),
    /** TaskState.version at commit. */
    state_version: z.number().int().min(1),
    trigger: CheckpointTriggerSchema,
    created_at: z.iso.datetime(),
    created_by: IdentitySchema,
    workflow_definition_digest: digest,
    /** The request digest of the task's creation: what the task was asked to do. */
    input_digest: digest,
    /** sha256 of the task's artifacts, when it has produced any. */
    output_digest: digest.optional(),
    /** The snapshot is embedded (state_snapshot); this names it inside the document. */
    state_snapshot_uri: z.string().max(256),
    state_snapshot: snapshot,
    pending_work: z.array(PendingWorkSchema).max(1000),
    tool_receipt_ids: z.array(z.string().min(1).max(128)).max(MAX_CHECKPOINT_RECEIPTS),
    budget_consumed: BudgetConsumedSchema,
    provenance: ProvenanceSchema,
    /** Values replaced before signing (secrets, raw reasoning): where and what kind, never what. */
    redactions: z.array(RedactionSchema).max(10_000),
    /**
     * The data classes the snapshot holds, least to most sensitive
     * (lib/model/data-classes.ts), under its workflow's declarations: what a
     * restore, an export or retention must treat it as. Absent on checkpoints
     * sealed before classes existed, which verify as they were signed.
     */
    data_classes: z.array(z.enum(dataClasses)).max(dataClasses.length).optional(),
    integrity: IntegritySchema,
  });
}

/** A v2 document whose snapshot is current TaskState v2: what every reader gets. */
export const CheckpointDocumentSchema = documentV2(TaskStateSchema);
export type CheckpointDocument = z.infer<typeof CheckpointDocumentSchema>;

/** A stored v2 document, its snapshot still in whatever TaskState version it was written with. */
const StoredCheckpointV2Schema = documentV2(z.unknown());

/** TaskState v1: before subtasks and hop counting. */
export const TaskStateV1Schema = z.strictObject({
  schema_version: z.literal(TASK_STATE_SCHEMA_VERSION_V1),
  task_id: z.string(),
  version: z.number().int().min(1),
  status: z.string(),
  gates: GatesSchema,
  artifacts: ArtifactsSchema,
  active_agents: z.array(IdentitySchema).max(100),
  completed_agents: z.array(IdentitySchema).max(100),
  failed_agents: z.array(IdentitySchema).max(100),
  budget: BudgetSchema.omit({ hops_used: true }),
  workflow_digest: z.string(),
  intent_id: z.string(),
  updated_at: z.string(),
  updated_by: z.string(),
});

/** Checkpoint v1: the first, smaller format, without pending work, provenance, hop count or trigger. */
export const CheckpointDocumentV1Schema = z.strictObject({
  schema_version: z.literal(CHECKPOINT_SCHEMA_VERSION_V1),
  checkpoint_id: checkpointId,
  task_id: z.string().min(1).max(128),
  state_version: z.number().int().min(1),
  created_at: z.iso.datetime(),
  created_by: IdentitySchema,
  workflow_definition_digest: digest,
  input_digest: digest,
  state_snapshot: z.unknown(),
  tool_receipt_ids: z.array(z.string().min(1).max(128)).max(MAX_CHECKPOINT_RECEIPTS),
  budget_consumed: z.strictObject({ currency_usd: z.number().finite().min(0).max(1e12), tokens: count }),
  integrity: z.strictObject({
    snapshot_digest: digest,
    key_id: keyId,
    signature: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
  }),
});

/** Provenance a v1 checkpoint never recorded: stated as such, not invented. */
export const UNRECORDED_POLICY_VERSION = "unrecorded (checkpoint v1)";

export type SchemaErrorKind = "unknown_version" | "invalid";

/** A document that is not a checkpoint this server can read. */
export class CheckpointSchemaError extends Error {
  constructor(
    readonly kind: SchemaErrorKind,
    message: string,
    readonly version?: string,
  ) {
    super(message);
    this.name = "CheckpointSchemaError";
  }
}

function versionOf(raw: unknown): string | undefined {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const v = (raw as { schema_version?: unknown }).schema_version;
  return typeof v === "string" ? v : undefined;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.map(String).join(".") || "(document)"}: ${i.message}`)
    .join("; ");
}

function parseOrSchemaError<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new CheckpointSchemaError("invalid", `${what} does not match its schema: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

export interface Upgraded<T> {
  value: T;
  /** The versions it was upgraded from, oldest first; empty when it was current. */
  upgradedFrom: string[];
}

/** TaskState of any version this server reads, as TaskState v2. */
export function upgradeTaskState(raw: unknown): Upgraded<TaskState> {
  const version = versionOf(raw);
  switch (version) {
    case TASK_STATE_SCHEMA_VERSION:
      return { value: parseOrSchemaError(TaskStateSchema, raw, "The state snapshot"), upgradedFrom: [] };
    case TASK_STATE_SCHEMA_VERSION_V1: {
      const v1 = parseOrSchemaError(TaskStateV1Schema, raw, "The state snapshot (task-state v1)");
      const value: TaskState = {
        ...v1,
        schema_version: TASK_STATE_SCHEMA_VERSION,
        budget: { ...v1.budget, hops_used: 0 },
        subtasks: [],
      };
      return {
        value: parseOrSchemaError(TaskStateSchema, value, "The upgraded state snapshot"),
        upgradedFrom: [TASK_STATE_SCHEMA_VERSION_V1],
      };
    }
    default:
      throw unknownVersion("task state", version, knownTaskStateSchemaVersions);
  }
}

export interface ParsedCheckpoint {
  /** The document as this server works with it: checkpoint v2 with a TaskState v2 snapshot. */
  document: CheckpointDocument;
  /** The snapshot exactly as stored: its digest is over these bytes, not over the upgrade. */
  storedSnapshot: unknown;
  /** Every version upgraded from on the way (document and snapshot), oldest first. */
  upgradedFrom: string[];
  storedSchemaVersion: string;
}

/**
 * A stored checkpoint document (parsed JSON, signature already stripped or
 * not) as checkpoint v2. Throws CheckpointSchemaError: `unknown_version`
 * naming the version, or `invalid` naming the offending fields.
 */
export function upgradeCheckpointDocument(raw: unknown): ParsedCheckpoint {
  const version = versionOf(raw);
  switch (version) {
    case CHECKPOINT_SCHEMA_VERSION: {
      const stored = parseOrSchemaError(StoredCheckpointV2Schema, raw, "The checkpoint");
      const snapshot = upgradeTaskState(stored.state_snapshot);
      return {
        document: { ...stored, state_snapshot: snapshot.value },
        storedSnapshot: stored.state_snapshot,
        upgradedFrom: snapshot.upgradedFrom,
        storedSchemaVersion: version,
      };
    }
    case CHECKPOINT_SCHEMA_VERSION_V1: {
      const v1 = parseOrSchemaError(CheckpointDocumentV1Schema, raw, "The checkpoint (v1)");
      const snapshot = upgradeTaskState(v1.state_snapshot);
      const state = snapshot.value;
      const document: CheckpointDocument = {
        schema_version: CHECKPOINT_SCHEMA_VERSION,
        checkpoint_id: v1.checkpoint_id,
        task_id: v1.task_id,
        state_version: v1.state_version,
        // v1 did not say why; every v1 checkpoint was taken by hand.
        trigger: "on_demand",
        created_at: v1.created_at,
        created_by: v1.created_by,
        workflow_definition_digest: v1.workflow_definition_digest,
        input_digest: v1.input_digest,
        state_snapshot_uri: snapshotUriOf(v1.checkpoint_id),
        state_snapshot: state,
        pending_work: [],
        tool_receipt_ids: v1.tool_receipt_ids,
        budget_consumed: { ...v1.budget_consumed, hops: state.budget.hops_used },
        provenance: {
          last_message_id: "",
          delegation_hash: v1.input_digest,
          policy_version: UNRECORDED_POLICY_VERSION,
        },
        redactions: [],
        integrity: v1.integrity,
      };
      return {
        document: parseOrSchemaError(CheckpointDocumentSchema, document, "The upgraded checkpoint"),
        storedSnapshot: v1.state_snapshot,
        upgradedFrom: [CHECKPOINT_SCHEMA_VERSION_V1, ...snapshot.upgradedFrom],
        storedSchemaVersion: version,
      };
    }
    default:
      throw unknownVersion("checkpoint", version, knownCheckpointSchemaVersions);
  }
}

function unknownVersion(what: string, version: string | undefined, known: readonly string[]): CheckpointSchemaError {
  return version === undefined
    ? new CheckpointSchemaError(
        "unknown_version",
        `The ${what} has no schema_version; this server reads ${known.join(", ")}.`,
      )
    : new CheckpointSchemaError(
        "unknown_version",
        `Unknown ${what} schema_version "${version}"; this server reads ${known.join(", ")}.`,
        version,
      );
}

/** The snapshot is embedded; the spec's URI field points into the document itself. */
export function snapshotUriOf(checkpointId: string): string {
  return `verity:checkpoints/${checkpointId}#state_snapshot`;
}
