import { describe, expect, it } from "vitest";
import { AuditActionSchema, streamFor } from "@/lib/model/audit/audit-chain";
import {
  checkpointRestoreAuditEntry,
  divergenceAuditEntry,
  executionActionByStatus,
  executionAuditEntry,
  transitionAuditEntry,
} from "@/lib/model/audit/audit-events";
import type { CheckpointRestore, DivergenceAlert, Execution } from "@/lib/generated/prisma/client";

const agent = { identity: "spiffe://verity.local/agent/refund-bot", kind: "agent" as const };
const at = new Date("2026-11-30T12:00:00.000Z");

describe("audit entries of the write paths", () => {
  it("names a creation, a transition and a restore apart, in the task's chain", () => {
    const base = {
      id: "tr_1",
      taskId: "t1",
      fromVersion: null,
      toVersion: 1,
      fromStatus: null,
      toStatus: "RECEIVED",
      actor: agent,
      reason: "created",
      createdAt: at,
    };
    expect(transitionAuditEntry(base).action).toBe("task.created");
    const moved = transitionAuditEntry({
      ...base,
      fromVersion: 1,
      toVersion: 2,
      fromStatus: "RECEIVED",
      toStatus: "PLANNING",
    });
    expect(moved).toMatchObject({
      action: "task.transitioned",
      taskId: "t1",
      at,
      details: { transition_id: "tr_1", from_version: 1, to_version: 2 },
    });
    expect(streamFor(moved)).toBe("task:t1");
    expect(transitionAuditEntry({ ...base, fromVersion: 4, toVersion: 5 }, { restored: true }).action).toBe(
      "task.restored",
    );
  });

  it("maps every execution status to an action of the closed list; reconciliation outcomes by name", () => {
    for (const action of Object.values(executionActionByStatus))
      expect(AuditActionSchema.safeParse(action).success).toBe(true);
    expect(executionActionByStatus.RECONCILED_SUCCEEDED).toBe("reconciliation.succeeded");
    expect(executionActionByStatus.NEEDS_HUMAN).toBe("reconciliation.needs_human");
    const row = {
      id: "ex_1",
      taskId: "t1",
      toolCallId: "c1",
      attempt: 1,
      attemptId: "a1",
      idempotencyKey: "vrt:t1:c1",
      tool: "payment.refund",
      irreversible: true,
      status: "OUTCOME_UNKNOWN",
      version: 3,
    } as Execution;
    expect(streamFor(executionAuditEntry(row, "SENT", "timeout", undefined, agent))).toBe("execution:ex_1");
    expect(executionAuditEntry(row, "SENT", "timeout", undefined, agent)).toMatchObject({
      action: "execution.outcome_unknown",
      subject: { type: "execution", id: "ex_1" },
      details: { from_status: "SENT", to_status: "OUTCOME_UNKNOWN", idempotency_key: "vrt:t1:c1", evidence: null },
    });
  });

  it("tells a raised divergence from a resolved one, and an applied restore from a refused one", () => {
    const alert = {
      id: "al_1",
      taskId: "t1",
      executionId: null,
      kind: "effect_mismatch",
      severity: "critical",
      message: "m",
      internal: {},
      external: {},
      status: "OPEN",
      version: 1,
      resolution: null,
    } as unknown as DivergenceAlert;
    expect(divergenceAuditEntry(alert, agent).action).toBe("divergence.raised");
    expect(divergenceAuditEntry({ ...alert, status: "RESOLVED", resolution: "refunded by hand" }, agent)).toMatchObject(
      { action: "divergence.resolved", details: { resolution: "refunded by hand" } },
    );
    const restore = {
      id: "rs_1",
      taskId: "t1",
      checkpointId: "cp_1",
      outcome: "refused",
      rewind: false,
      fromVersion: 7,
      toVersion: null,
      transitionId: null,
      refusal: "stale_checkpoint",
      reason: "r",
      createdAt: at,
    } as CheckpointRestore;
    expect(checkpointRestoreAuditEntry(restore, agent)).toMatchObject({
      action: "checkpoint.restore_refused",
      details: { refusal: "stale_checkpoint" },
    });
    expect(streamFor(checkpointRestoreAuditEntry(restore, agent))).toBe("checkpoint:cp_1");
    const applied = checkpointRestoreAuditEntry({ ...restore, outcome: "applied", toVersion: 8 }, agent);
    expect(applied).toMatchObject({ action: "task.restored", details: { checkpoint_id: "cp_1", to_version: 8 } });
    expect(streamFor(applied)).toBe("task:t1");
  });
});
