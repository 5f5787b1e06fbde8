import { z } from "zod";
import { ExecutionStatusSchema } from "@/lib/adapters/api/execution-resources";
import {
  TaskResourceSchema,
  TransitionResourceSchema,
  taskResource,
  MaskedFieldsSchema,
  transitionResource,
} from "@/lib/adapters/api/task-resources";
import {
  CheckpointDocumentSchema,
  CheckpointTriggerSchema,
  integrityCheckNames,
} from "@/lib/model/checkpoints/checkpoint-schema";
import type { RestoreResult } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import type { CheckpointDetail } from "@/lib/use-cases/checkpoints/get-checkpoint-detail";
import {
  restoreRefusalCodes,
  type CheckpointRestoreView,
  type PlannedEffect,
  type RestorePlan,
} from "@/lib/model/checkpoints/restore-plan";
import type { CheckpointSummary, IntegrityReport, StateDiffEntry } from "@/lib/model/checkpoints/checkpoint-reports";
import { TaskStateSchema } from "@/lib/model/tasks/task-state";
import type { Principal } from "@/lib/model/permissions";
import { maskCheckpointDetailForReader } from "@/lib/use-cases/data-classes/mask-for-reader";

/**
 * The checkpoint resources of /api/v1 as zod schemas (the OpenAPI document is
 * generated from them) and the functions that build them from the engine's
 * views. snake_case and ISO 8601 times, like every other resource.
 */
export const IntegrityReportSchema = z.object({
  ok: z.boolean().meta({
    description:
      "Every check passed: the stored bytes are what was signed, and the snapshot is a valid state of the task's workflow.",
  }),
  checks: z.array(z.object({ check: z.enum(integrityCheckNames), ok: z.boolean(), message: z.string() })),
  stored_schema_version: z.string().nullable(),
  upgraded_from: z
    .array(z.string())
    .meta({ description: "Schema versions the document was upgraded from on read, oldest first." }),
});

export const CheckpointSummarySchema = z.object({
  id: z.string(),
  task_id: z.string(),
  state_version: z.int(),
  schema_version: z.string(),
  trigger: CheckpointTriggerSchema,
  created_at: z.iso.datetime(),
  created_by: z.string(),
  key_id: z.string(),
  snapshot_digest: z.string(),
  snapshot_status: z
    .string()
    .nullable()
    .meta({ description: "The task's status in the snapshot; null when the payload is unreadable." }),
  integrity: IntegrityReportSchema,
});
export type CheckpointSummaryResource = z.infer<typeof CheckpointSummarySchema>;

export const CheckpointListSchema = z.object({ items: z.array(CheckpointSummarySchema) });

const DiffEntrySchema = z.object({
  path: z.string(),
  kind: z.enum(["added", "removed", "changed"]),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
});

export const CheckpointDetailSchema = z.object({
  checkpoint: CheckpointSummarySchema,
  document: CheckpointDocumentSchema.nullable().meta({
    description: "Checkpoint v2 (upgraded on read), with integrity.signature; null when the payload cannot be read.",
  }),
  task: TaskResourceSchema,
  diff_to_current: z
    .array(DiffEntrySchema)
    .meta({ description: "before = the checkpoint's snapshot, after = the task now." }),
  masked_fields: MaskedFieldsSchema,
});

const PlannedEffectSchema = z.object({
  execution_id: z.string(),
  tool_call_id: z.string(),
  tool: z.string(),
  irreversible: z.boolean(),
  status: ExecutionStatusSchema,
  idempotency_key: z.string(),
  action: z.string(),
});

const consumed = z.object({ currency_usd: z.number(), tokens: z.int(), hops: z.int() });

export const RestorePlanSchema = z.object({
  checkpoint_id: z.string(),
  task_id: z.string(),
  kind: z.enum(["rewind", "roll_forward", "none"]),
  rewind: z.boolean(),
  allowed: z.boolean(),
  refusal: z.object({ code: z.enum(restoreRefusalCodes), message: z.string() }).nullable(),
  fallback_checkpoint_id: z.string().nullable(),
  fallback_message: z.string().nullable(),
  integrity: IntegrityReportSchema,
  current: z.object({ version: z.int(), status: z.string() }),
  checkpoint: z.object({
    state_version: z.int(),
    status: z.string().nullable(),
    trigger: CheckpointTriggerSchema,
    created_at: z.iso.datetime(),
  }),
  effects: z.object({
    skipped_by_receipt: z.array(PlannedEffectSchema),
    needs_reconciliation: z.array(PlannedEffectSchema),
    needs_human: z.array(PlannedEffectSchema),
    retry_same_key: z.array(PlannedEffectSchema),
    cancelled: z.array(PlannedEffectSchema),
  }),
  reauthorization: z.object({
    budget: z.object({ checkpoint: consumed, current: consumed, resulting: consumed, committed_usd: z.number() }),
    workflow: z.object({
      checkpoint_digest: z.string().nullable(),
      current_digest: z.string(),
      name: z.string(),
      version: z.int(),
      compatible: z.boolean(),
    }),
    policy_version: z.object({ checkpoint: z.string().nullable(), current: z.string(), changed: z.boolean() }),
    credentials: z.string(),
  }),
  lease: z.object({
    active: z.boolean(),
    holder: z.string().nullable(),
    fencing_token: z.string().nullable(),
    expires_at: z.iso.datetime().nullable(),
    action: z.enum(["fence", "none"]),
  }),
  resulting_state: TaskStateSchema.nullable(),
  diff: z.array(DiffEntrySchema).meta({ description: "before = the task now, after = resulting_state." }),
  masked_fields: MaskedFieldsSchema.optional().meta({
    description:
      "Pointers into this plan whose values read [restricted] for a reader without clearance (resulting_state, diff); absent in a restore attempt's kept plan.",
  }),
});
export type RestorePlanResource = z.infer<typeof RestorePlanSchema>;

export const CheckpointRestoreSchema = z.object({
  id: z.string().meta({ description: "The restore_id: retrying with it replays this record." }),
  task_id: z.string(),
  checkpoint_id: z.string(),
  outcome: z.enum(["applied", "refused"]),
  rewind: z.boolean(),
  from_version: z.int(),
  to_version: z.int().nullable(),
  transition_id: z.string().nullable(),
  refusal: z.enum(restoreRefusalCodes).nullable(),
  plan: RestorePlanSchema.meta({
    description:
      "The plan as it was when the attempt was made (resulting_state is not kept: an applied restore's state is its transition's).",
  }),
  actor: z.string(),
  reason: z.string(),
  created_at: z.iso.datetime(),
});

export const CheckpointRestoreListSchema = z.object({ items: z.array(CheckpointRestoreSchema) });

export const RestoreResultSchema = z.object({
  plan: RestorePlanSchema,
  task: TaskResourceSchema,
  transition: TransitionResourceSchema,
  restore: CheckpointRestoreSchema,
  replayed: z
    .boolean()
    .meta({ description: "True when this restore_id was already applied: nothing was written now." }),
});

export function integrityResource(r: IntegrityReport): z.infer<typeof IntegrityReportSchema> {
  return { ok: r.ok, checks: r.checks, stored_schema_version: r.storedSchemaVersion, upgraded_from: r.upgradedFrom };
}

export function checkpointSummaryResource(c: CheckpointSummary): CheckpointSummaryResource {
  return {
    id: c.id,
    task_id: c.taskId,
    state_version: c.stateVersion,
    schema_version: c.schemaVersion,
    trigger: c.trigger,
    created_at: c.createdAt.toISOString(),
    created_by: c.createdBy,
    key_id: c.keyId,
    snapshot_digest: c.snapshotDigest,
    snapshot_status: c.snapshotStatus,
    integrity: integrityResource(c.integrity),
  };
}

function diffResource(entries: StateDiffEntry[]): z.infer<typeof DiffEntrySchema>[] {
  return entries.map((e) => ({
    path: e.path,
    kind: e.kind,
    ...("before" in e ? { before: e.before } : {}),
    ...("after" in e ? { after: e.after } : {}),
  }));
}

/** The checkpoint as `principal` may see it: restricted snapshot and task fields masked without clearance. */
export function checkpointDetailResource(
  principal: Principal,
  detail: CheckpointDetail,
): z.infer<typeof CheckpointDetailSchema> {
  const { value: d, maskedFields } = maskCheckpointDetailForReader(principal, detail);
  return {
    checkpoint: checkpointSummaryResource(d.summary),
    document: d.document,
    task: taskResource(d.task),
    diff_to_current: diffResource(d.diffToCurrent),
    masked_fields: maskedFields,
  };
}

function effectResource(e: PlannedEffect): z.infer<typeof PlannedEffectSchema> {
  return {
    execution_id: e.executionId,
    tool_call_id: e.toolCallId,
    tool: e.tool,
    irreversible: e.irreversible,
    status: e.status,
    idempotency_key: e.idempotencyKey,
    action: e.action,
  };
}

export function restorePlanResource(p: RestorePlan, maskedFields?: string[]): RestorePlanResource {
  const r = p.reauthorization;
  return {
    checkpoint_id: p.checkpointId,
    task_id: p.taskId,
    kind: p.kind,
    rewind: p.rewind,
    allowed: p.allowed,
    refusal: p.refusal,
    fallback_checkpoint_id: p.fallbackCheckpointId,
    fallback_message: p.fallbackMessage,
    integrity: integrityResource(p.integrity),
    current: p.current,
    checkpoint: {
      state_version: p.checkpoint.stateVersion,
      status: p.checkpoint.status,
      trigger: p.checkpoint.trigger,
      created_at: p.checkpoint.createdAt.toISOString(),
    },
    effects: {
      skipped_by_receipt: p.effects.skippedByReceipt.map(effectResource),
      needs_reconciliation: p.effects.needsReconciliation.map(effectResource),
      needs_human: p.effects.needsHuman.map(effectResource),
      retry_same_key: p.effects.retrySameKey.map(effectResource),
      cancelled: p.effects.cancelled.map(effectResource),
    },
    reauthorization: {
      budget: {
        checkpoint: r.budget.checkpoint,
        current: r.budget.current,
        resulting: r.budget.resulting,
        committed_usd: r.budget.committedUsd,
      },
      workflow: {
        checkpoint_digest: r.workflow.checkpointDigest,
        current_digest: r.workflow.currentDigest,
        name: r.workflow.name,
        version: r.workflow.version,
        compatible: r.workflow.compatible,
      },
      policy_version: r.policyVersion,
      credentials: r.credentials,
    },
    lease: {
      active: p.lease.active,
      holder: p.lease.holder,
      fencing_token: p.lease.fencingToken,
      expires_at: p.lease.expiresAt?.toISOString() ?? null,
      action: p.lease.action,
    },
    resulting_state: p.resultingState,
    diff: diffResource(p.diff),
    ...(maskedFields ? { masked_fields: maskedFields } : {}),
  };
}

export function checkpointRestoreResource(r: CheckpointRestoreView): z.infer<typeof CheckpointRestoreSchema> {
  return {
    id: r.id,
    task_id: r.taskId,
    checkpoint_id: r.checkpointId,
    outcome: r.outcome,
    rewind: r.rewind,
    from_version: r.fromVersion,
    to_version: r.toVersion,
    transition_id: r.transitionId,
    refusal: r.refusal,
    plan: restorePlanResource(r.plan),
    actor: r.actor,
    reason: r.reason,
    created_at: r.createdAt.toISOString(),
  };
}

export function restoreResultResource(r: RestoreResult): z.infer<typeof RestoreResultSchema> {
  return {
    plan: restorePlanResource(r.plan),
    task: taskResource(r.task),
    transition: transitionResource(r.transition),
    restore: checkpointRestoreResource(r.restore),
    replayed: r.replayed,
  };
}
