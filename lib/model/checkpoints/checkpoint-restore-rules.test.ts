import { describe, expect, it } from "vitest";
import { automaticCheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-boundaries";
import {
  classifyEffects,
  decideRestore,
  diffStates,
  pathToFailure,
  resultingStateOf,
  type PlannedEffectSource,
} from "@/lib/model/checkpoints/checkpoint-restore-rules";
import type { RestoreEffects } from "@/lib/model/checkpoints/restore-plan";
import type { IntegrityReport } from "@/lib/model/checkpoints/checkpoint-reports";
import { executionMoves, type ExecutionStatus } from "@/lib/model/executions/execution-rules";
import type { TaskState } from "@/lib/model/tasks/task-state";
import { agentTaskV2 } from "@/lib/model/workflows/agent-task";
import { deliveryV1 } from "@/lib/model/workflows/delivery";
import { makeState } from "@/tests/helpers/task-states";

const allStatuses = Object.keys(executionMoves) as ExecutionStatus[];

function effect(status: ExecutionStatus, id = `exec_${status}`): PlannedEffectSource {
  return {
    id,
    toolCallId: `call_${status}`,
    tool: "payments.refund",
    irreversible: true,
    status,
    idempotencyKey: `vrt:t:${status}`,
  };
}

const okIntegrity: IntegrityReport = {
  ok: true,
  checks: [
    "payload_parses",
    "payload_canonical",
    "schema",
    "snapshot_digest",
    "signature",
    "columns_match",
    "snapshot_valid",
    "workflow_compatible",
  ].map((check) => ({
    check: check as IntegrityReport["checks"][number]["check"],
    ok: true,
    message: "ok",
  })),
  storedSchemaVersion: "oaies.checkpoint.v2",
  upgradedFrom: [],
};
const noEffects: RestoreEffects = {
  skippedByReceipt: [],
  needsReconciliation: [],
  needsHuman: [],
  retrySameKey: [],
  cancelled: [],
};

function failing(check: string): IntegrityReport {
  return {
    ...okIntegrity,
    ok: false,
    checks: okIntegrity.checks.map((c) => (c.check === check ? { ...c, ok: false, message: `${check} broke` } : c)),
  };
}

const snapshot = makeState(agentTaskV2, "RUNNING", {
  version: 5,
  subtasks: [{ id: "issue-refund", title: "Issue the refund", mandatory: true, status: "PENDING" }],
  budget: { currency_committed_usd: 10, currency_spent_usd: 1, tokens_spent: 100, hops_used: 3 },
});
const current: TaskState = {
  ...snapshot,
  version: 9,
  status: "VALIDATING",
  artifacts: { test_results: "ok" },
  subtasks: [
    { id: "issue-refund", title: "Issue the refund", mandatory: true, status: "COMPLETED" },
    { id: "notify", title: "Notify", mandatory: true, status: "PENDING" },
  ],
  budget: { currency_committed_usd: 20, currency_spent_usd: 4, tokens_spent: 90, hops_used: 7 },
};

describe("effects on resume", () => {
  it("classifies every execution status, exhaustively", () => {
    const effects = classifyEffects(
      allStatuses.map((s) => effect(s)),
      new Set(),
    );
    const ids = (list: { status: string }[]) => list.map((e) => e.status).sort();
    expect(ids(effects.skippedByReceipt)).toEqual(["RECONCILED_SUCCEEDED", "SUCCEEDED"]);
    expect(ids(effects.needsReconciliation)).toEqual(["OUTCOME_UNKNOWN", "SENT"]);
    expect(ids(effects.needsHuman)).toEqual(["NEEDS_HUMAN"]);
    expect(ids(effects.retrySameKey)).toEqual(["FAILED", "INTENT_RECORDED", "RECONCILED_FAILED"]);
    expect(ids(effects.cancelled)).toEqual(["CANCELLED"]);
  });

  it("puts an execution with an undecided review with the people, whatever its status", () => {
    const effects = classifyEffects([effect("SENT", "exec_frozen")], new Set(["exec_frozen"]));
    expect(effects.needsHuman.map((e) => e.executionId)).toEqual(["exec_frozen"]);
    expect(effects.needsReconciliation).toEqual([]);
  });
});

describe("the restored state", () => {
  const restored = resultingStateOf(snapshot, current);

  it("takes status, gates, artifacts and subtask progress from the snapshot", () => {
    expect(restored.status).toBe("RUNNING");
    expect(restored.artifacts).toEqual({});
    expect(restored.subtasks[0]).toEqual({
      id: "issue-refund",
      title: "Issue the refund",
      mandatory: true,
      status: "PENDING",
    });
  });

  it("never takes the budget from the checkpoint: the commitment is the current one, each consumed field the greater", () => {
    expect(restored.budget).toEqual({
      currency_committed_usd: 20,
      currency_spent_usd: 4,
      tokens_spent: 100,
      hops_used: 7,
    });
  });

  it("keeps subtasks added since (never removed, mandatory stays mandatory)", () => {
    expect(restored.subtasks.map((s) => s.id)).toEqual(["issue-refund", "notify"]);
    const unflagged = resultingStateOf(
      { ...snapshot, subtasks: [{ ...snapshot.subtasks[0]!, mandatory: false }] },
      current,
    );
    expect(unflagged.subtasks[0]?.mandatory).toBe(true);
  });
});

describe("deciding a restore", () => {
  const base = {
    integrity: okIntegrity,
    def: agentTaskV2,
    current,
    checkpointVersion: 5,
    snapshot,
    rewind: true,
    hasOpenDivergence: false,
    effects: noEffects,
  };

  it("allows a rewind the engineer chose, with the state it would write", () => {
    const decision = decideRestore(base);
    expect(decision).toMatchObject({ kind: "rewind", refusal: null });
    expect(decision.resultingState?.status).toBe("RUNNING");
  });

  it("refuses, in order and by name: corrupt, incompatible, terminal, current, stale, diverged, unreconciled, awaiting_human, invalid_state", () => {
    const code = (over: Partial<Parameters<typeof decideRestore>[0]>) =>
      decideRestore({ ...base, ...over }).refusal?.code;
    expect(code({ integrity: failing("signature") })).toBe("corrupt");
    expect(code({ integrity: failing("signature"), current: { ...current, status: "COMPLETED" } })).toBe("corrupt");
    expect(code({ snapshot: null })).toBe("corrupt");
    expect(code({ integrity: failing("workflow_compatible") })).toBe("incompatible");
    expect(code({ current: { ...current, status: "CANCELLED" } })).toBe("terminal");
    expect(code({ checkpointVersion: 9 })).toBe("current");
    expect(code({ rewind: false })).toBe("stale");
    expect(code({ hasOpenDivergence: true })).toBe("diverged");
    const [unknown] = classifyEffects([effect("OUTCOME_UNKNOWN")], new Set()).needsReconciliation;
    expect(code({ effects: { ...noEffects, needsReconciliation: [unknown!] } })).toBe("unreconciled");
    const [human] = classifyEffects([effect("NEEDS_HUMAN")], new Set()).needsHuman;
    expect(code({ effects: { ...noEffects, needsHuman: [human!] } })).toBe("awaiting_human");
    // A delivery snapshot in `reviewing` with the plan gate false is not a valid state of that workflow.
    const delivery = makeState(deliveryV1, "testing", { version: 9 });
    expect(
      code({
        def: deliveryV1,
        current: delivery,
        snapshot: { ...makeState(deliveryV1, "reviewing"), gates: { ...delivery.gates, plan_approved: false } },
      }),
    ).toBe("invalid_state");
  });

  it("says why in words a person can act on", () => {
    expect(decideRestore({ ...base, rewind: false }).refusal?.message).toBe(
      "The checkpoint is of version 5, older than the committed version 9: restoring it would overwrite newer state. An engineer may choose to rewind explicitly.",
    );
    expect(decideRestore({ ...base, integrity: failing("signature") }).refusal?.message).toContain(
      "signature FAILED (signature broke)",
    );
  });

  it("rolls forward to a newer checkpoint (a standby behind its primary) without a rewind", () => {
    const decision = decideRestore({ ...base, current: { ...snapshot, version: 3, status: "READY" }, rewind: false });
    expect(decision).toMatchObject({ kind: "roll_forward", refusal: null });
  });

  it("allows settled effects: receipts, known failures, cancelled", () => {
    const settled = classifyEffects(
      [effect("SUCCEEDED"), effect("FAILED"), effect("CANCELLED"), effect("INTENT_RECORDED")],
      new Set(),
    );
    expect(decideRestore({ ...base, effects: settled }).refusal).toBeNull();
  });
});

describe("diffStates", () => {
  it("names each changed member by path, matching subtasks by id", () => {
    expect(diffStates(snapshot, current)).toEqual([
      { path: "artifacts.test_results", kind: "added", after: "ok" },
      { path: "budget.currency_committed_usd", kind: "changed", before: 10, after: 20 },
      { path: "budget.currency_spent_usd", kind: "changed", before: 1, after: 4 },
      { path: "budget.hops_used", kind: "changed", before: 3, after: 7 },
      { path: "budget.tokens_spent", kind: "changed", before: 100, after: 90 },
      { path: "status", kind: "changed", before: "RUNNING", after: "VALIDATING" },
      { path: "subtasks[issue-refund].status", kind: "changed", before: "PENDING", after: "COMPLETED" },
      { path: "subtasks[notify]", kind: "added", after: current.subtasks[1] },
      { path: "version", kind: "changed", before: 5, after: 9 },
    ]);
    expect(diffStates(current, current)).toEqual([]);
  });
});

describe("ending a task with no valid checkpoint", () => {
  it("finds the shortest path to a failure state the actor may take", () => {
    expect(pathToFailure(agentTaskV2, "RUNNING", "agent")).toEqual(["FAILED", "PERMANENTLY_FAILED"]);
    expect(pathToFailure(agentTaskV2, "RECOVERING", "system")).toEqual(["PERMANENTLY_FAILED"]);
    expect(pathToFailure(deliveryV1, "reviewing", "agent")).toEqual(["failed"]);
  });

  it("falls back to another terminal non-success state, and says none when nothing is reachable", () => {
    expect(pathToFailure(agentTaskV2, "WAITING_FOR_HUMAN", "agent")).toEqual(["CANCELLED"]);
    expect(pathToFailure(agentTaskV2, "COMPLETED", "agent")).toBeNull();
  });
});

describe("automatic checkpoint boundaries", () => {
  const running = makeState(agentTaskV2, "RUNNING");
  const at = (status: string, over: Partial<TaskState> = {}) => ({ ...running, status, ...over });

  it("takes one at each semantic boundary, the most significant first", () => {
    expect(automaticCheckpointTrigger(agentTaskV2, running, at("CANCELLED"))).toBe("cancelled");
    expect(
      automaticCheckpointTrigger(
        agentTaskV2,
        at("VALIDATING"),
        at("COMPLETED", { gates: { ...running.gates, tests_passing: true } }),
      ),
    ).toBe("terminal");
    expect(automaticCheckpointTrigger(agentTaskV2, at("FAILED"), at("PERMANENTLY_FAILED"))).toBe("terminal");
    expect(automaticCheckpointTrigger(agentTaskV2, running, at("WAITING_FOR_HUMAN"))).toBe("escalated");
    expect(
      automaticCheckpointTrigger(
        agentTaskV2,
        running,
        at("RUNNING", { gates: { ...running.gates, plan_approved: true } }),
      ),
    ).toBe("gate_opened");
    expect(
      automaticCheckpointTrigger(agentTaskV2, running, at("RUNNING", { artifacts: { code_files: ["a.ts"] } })),
    ).toBe("artifacts_validated");
    expect(
      automaticCheckpointTrigger(deliveryV1, makeState(deliveryV1, "testing"), {
        ...makeState(deliveryV1, "testing"),
        status: "cancelled",
      }),
    ).toBe("cancelled");
  });

  it("takes none elsewhere: moves between working states, budget updates, a gate closing", () => {
    expect(automaticCheckpointTrigger(agentTaskV2, running, at("WAITING_FOR_TOOL"))).toBeNull();
    expect(
      automaticCheckpointTrigger(agentTaskV2, running, at("RUNNING", { budget: { ...running.budget, hops_used: 9 } })),
    ).toBeNull();
    const open = at("RUNNING", { gates: { ...running.gates, review_passed: true } });
    expect(automaticCheckpointTrigger(agentTaskV2, open, running)).toBeNull();
    // Same artifacts in another key order are no change.
    const a = at("RUNNING", { artifacts: { code_files: ["x"], test_results: "ok" } });
    const b = at("RUNNING", { artifacts: { test_results: "ok", code_files: ["x"] } });
    expect(automaticCheckpointTrigger(agentTaskV2, a, b)).toBeNull();
  });
});
