import { describe, expect, it } from "vitest";
import {
  CHECKPOINT_SCHEMA_VERSION,
  CHECKPOINT_SCHEMA_VERSION_V1,
  CheckpointSchemaError,
  TASK_STATE_SCHEMA_VERSION_V1,
  UNRECORDED_POLICY_VERSION,
  upgradeCheckpointDocument,
  upgradeTaskState,
} from "@/lib/model/checkpoints/checkpoint-schema";
import { TASK_STATE_SCHEMA_VERSION } from "@/lib/model/tasks/task-state";
import { agentTaskV2 } from "@/lib/model/workflows/agent-task";
import { makeState } from "@/tests/helpers/task-states";

const digest = (c: string) => `sha256:${c.repeat(64)}`;

function stateV1() {
  const { subtasks: _s, budget, ...rest } = makeState(agentTaskV2, "RUNNING", { version: 4, task_id: "task_1" });
  const { hops_used: _h, ...budgetV1 } = budget;
  return { ...rest, schema_version: TASK_STATE_SCHEMA_VERSION_V1, budget: budgetV1 };
}

function checkpointV1(snapshot: unknown = stateV1()) {
  return {
    schema_version: CHECKPOINT_SCHEMA_VERSION_V1,
    checkpoint_id: "ckpt_v1",
    task_id: "task_1",
    state_version: 4,
    created_at: "2026-01-02T03:04:05.678Z",
    created_by: "spiffe://verity.test/agent/a",
    workflow_definition_digest: agentTaskV2.digest,
    input_digest: digest("a"),
    state_snapshot: snapshot,
    tool_receipt_ids: ["exec_1"],
    budget_consumed: { currency_usd: 1, tokens: 100 },
    integrity: { snapshot_digest: digest("b"), key_id: "k1" },
  };
}

describe("TaskState upgrade", () => {
  it("reads v2 as it is", () => {
    const state = makeState(agentTaskV2, "RUNNING");
    expect(upgradeTaskState(state)).toEqual({ value: state, upgradedFrom: [] });
  });

  it("upgrades v1 (no subtasks, no hop count) to v2 with no subtasks and 0 hops", () => {
    const { value, upgradedFrom } = upgradeTaskState(stateV1());
    expect(upgradedFrom).toEqual([TASK_STATE_SCHEMA_VERSION_V1]);
    expect(value.schema_version).toBe(TASK_STATE_SCHEMA_VERSION);
    expect(value.subtasks).toEqual([]);
    expect(value.budget).toEqual({
      currency_committed_usd: 10,
      currency_spent_usd: 1,
      tokens_spent: 100,
      hops_used: 0,
    });
    expect(value.status).toBe("RUNNING");
  });

  it("refuses an unknown version, naming it", () => {
    expect(() => upgradeTaskState({ ...stateV1(), schema_version: "oaies.task-state.v3" })).toThrow(
      /Unknown task state schema_version "oaies.task-state.v3"/,
    );
    try {
      upgradeTaskState({ ...stateV1(), schema_version: "oaies.task-state.v3" });
    } catch (error) {
      expect(error).toBeInstanceOf(CheckpointSchemaError);
      expect((error as CheckpointSchemaError).kind).toBe("unknown_version");
      expect((error as CheckpointSchemaError).version).toBe("oaies.task-state.v3");
    }
    expect(() => upgradeTaskState({ task_id: "x" })).toThrow(/no schema_version/);
  });

  it("refuses a v1 document with unknown members (the schema is fixed) and names the field", () => {
    expect(() => upgradeTaskState({ ...stateV1(), scratchpad: "x" })).toThrow(/scratchpad|Unrecognized/i);
  });
});

describe("checkpoint upgrade", () => {
  it("upgrades v1 to v2: nothing invented — no pending work, provenance marked unrecorded, hops from the snapshot", () => {
    const parsed = upgradeCheckpointDocument(checkpointV1());
    expect(parsed.storedSchemaVersion).toBe(CHECKPOINT_SCHEMA_VERSION_V1);
    expect(parsed.upgradedFrom).toEqual([CHECKPOINT_SCHEMA_VERSION_V1, TASK_STATE_SCHEMA_VERSION_V1]);
    const doc = parsed.document;
    expect(doc.schema_version).toBe(CHECKPOINT_SCHEMA_VERSION);
    expect(doc.trigger).toBe("on_demand");
    expect(doc.pending_work).toEqual([]);
    expect(doc.provenance.policy_version).toBe(UNRECORDED_POLICY_VERSION);
    expect(doc.budget_consumed).toEqual({ currency_usd: 1, tokens: 100, hops: 0 });
    expect(doc.state_snapshot.schema_version).toBe(TASK_STATE_SCHEMA_VERSION);
    expect(doc.state_snapshot_uri).toBe("verity:checkpoints/ckpt_v1#state_snapshot");
    // The digest is over the snapshot as stored, so the stored form is kept beside the upgrade.
    expect(parsed.storedSnapshot).toEqual(stateV1());
  });

  it("upgrades a v1 checkpoint whose snapshot is already v2", () => {
    const parsed = upgradeCheckpointDocument(
      checkpointV1(makeState(agentTaskV2, "RUNNING", { version: 4, task_id: "task_1" })),
    );
    expect(parsed.upgradedFrom).toEqual([CHECKPOINT_SCHEMA_VERSION_V1]);
    expect(parsed.document.budget_consumed.hops).toBe(3);
  });

  it("refuses an unknown checkpoint version with an error naming it", () => {
    expect(() => upgradeCheckpointDocument({ ...checkpointV1(), schema_version: "oaies.checkpoint.v9" })).toThrow(
      'Unknown checkpoint schema_version "oaies.checkpoint.v9"; this server reads oaies.checkpoint.v2, oaies.checkpoint.v1.',
    );
    expect(() => upgradeCheckpointDocument("not an object")).toThrow(/no schema_version/);
  });

  it("refuses a v2 document missing a member, naming it", () => {
    const v2 = { ...upgradeCheckpointDocument(checkpointV1()).document } as Record<string, unknown>;
    delete v2.provenance;
    expect(() => upgradeCheckpointDocument(v2)).toThrow(/provenance/);
  });
});
