import { canonicalCheckpointJson, canonicalDigest } from "@/lib/model/checkpoints/checkpoint-canonical";
import type { StoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import { signPayload, type CheckpointKeyring } from "@/lib/model/checkpoints/checkpoint-keys";
import { CHECKPOINT_SCHEMA_VERSION_V1, TASK_STATE_SCHEMA_VERSION_V1 } from "@/lib/model/checkpoints/checkpoint-schema";
import type { TaskState } from "@/lib/model/tasks/task-state";

/**
 * A checkpoint as an older release wrote it: Checkpoint v1 around a
 * TaskState v1 snapshot (no subtasks, no hop count), correctly digested and
 * signed, so the only thing a reader has to do is upgrade it. `document`
 * lets a test derive variants (an unknown schema_version) from it.
 */
export function signedV1Checkpoint(input: {
  state: TaskState;
  checkpointId: string;
  createdBy: string;
  createdAt: Date;
  keyring: CheckpointKeyring;
}): { row: StoredCheckpoint; document: Record<string, unknown> } {
  const {
    subtasks: _subtasks,
    budget: { hops_used: _hops, ...budget },
    ...rest
  } = input.state;
  const snapshot = { ...rest, budget, schema_version: TASK_STATE_SCHEMA_VERSION_V1 };
  const document = {
    schema_version: CHECKPOINT_SCHEMA_VERSION_V1,
    checkpoint_id: input.checkpointId,
    task_id: input.state.task_id,
    state_version: input.state.version,
    created_at: input.createdAt.toISOString(),
    created_by: input.createdBy,
    workflow_definition_digest: input.state.workflow_digest,
    input_digest: `sha256:${"a".repeat(64)}`,
    state_snapshot: snapshot,
    tool_receipt_ids: [],
    budget_consumed: { currency_usd: input.state.budget.currency_spent_usd, tokens: input.state.budget.tokens_spent },
    integrity: { snapshot_digest: canonicalDigest(snapshot), key_id: input.keyring.activeKeyId },
  };
  const payload = canonicalCheckpointJson(document);
  return {
    row: {
      id: input.checkpointId,
      taskId: input.state.task_id,
      stateVersion: input.state.version,
      schemaVersion: CHECKPOINT_SCHEMA_VERSION_V1,
      trigger: "on_demand",
      payload,
      snapshotDigest: document.integrity.snapshot_digest,
      signature: signPayload(payload, input.keyring).signature,
      keyId: input.keyring.activeKeyId,
      createdAt: input.createdAt,
      createdBy: input.createdBy,
    },
    document,
  };
}
