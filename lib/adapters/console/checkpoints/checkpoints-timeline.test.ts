import { describe, expect, it } from "vitest";
import type { CheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-schema";
import type { ExecutionView } from "@/lib/stores/execution-store";
import type { TransitionView } from "@/lib/stores/tasks/task-views";
import type { IntegrityStatus } from "@/lib/adapters/console/checkpoints/checkpoints-format";
import {
  buildTimeline,
  formatTick,
  integerTicks,
  timeDomain,
  timeTicks,
  versionAt,
} from "@/lib/adapters/console/checkpoints/checkpoints-timeline";

const t0 = Date.parse("2026-11-30T10:00:00.000Z");
const at = (seconds: number) => new Date(t0 + seconds * 1000);
const agent = "spiffe://verity.local/agent/refund-bot";
const engineer = "spiffe://verity.local/user/engineer";

function transition(
  toVersion: number,
  seconds: number,
  from: string | null,
  to: string,
  actor = agent,
): TransitionView {
  return {
    id: `tr_${toVersion}`,
    taskId: "t1",
    fromVersion: toVersion === 1 ? null : toVersion - 1,
    toVersion,
    fromStatus: from,
    toStatus: to,
    actor,
    actorKind: "agent",
    reason: null,
    patch: {},
    createdAt: at(seconds),
  };
}

function execution(id: string, seconds: number, status: ExecutionView["status"]): ExecutionView {
  return {
    id,
    taskId: "t1",
    toolCallId: "refund-1",
    attempt: 1,
    attemptId: "a1",
    idempotencyKey: "vrt:t1:refund-1",
    tool: "payments.refund",
    irreversible: true,
    request: {},
    status,
    version: 1,
    result: null,
    evidence: null,
    error: null,
    createdBy: agent,
    createdAt: at(seconds),
    updatedAt: at(seconds),
    sentAt: null,
    settledAt: null,
  };
}

function checkpoint(
  id: string,
  stateVersion: number,
  seconds: number,
  integrity: IntegrityStatus,
  trigger: CheckpointTrigger = "on_demand",
) {
  return { id, stateVersion, trigger, createdAt: at(seconds), createdBy: agent, integrity };
}

const transitions = [
  transition(1, 0, null, "RECEIVED"),
  transition(2, 1, "RECEIVED", "PLANNING"),
  transition(3, 2, "PLANNING", "READY"),
  transition(4, 3, "READY", "RUNNING"),
  transition(5, 5, "RUNNING", "WAITING_FOR_TOOL"),
  transition(6, 8, "WAITING_FOR_TOOL", "RUNNING"),
  transition(7, 12, "RUNNING", "RUNNING", engineer),
];

describe("buildTimeline", () => {
  const data = buildTimeline({
    // Out of order on purpose: the staircase is drawn by version.
    transitions: [...transitions].reverse(),
    executions: [execution("exec_1", 5, "SUCCEEDED")],
    checkpoints: [
      checkpoint("ckpt_a", 4, 4, "valid"),
      checkpoint("ckpt_b", 5, 5, "corrupt", "before_irreversible_effect"),
      checkpoint("ckpt_c", 6, 9, "unverifiable"),
    ],
    restores: [
      { id: "rst_1", checkpointId: "ckpt_a", outcome: "applied", rewind: true, toVersion: 7, createdAt: at(12) },
      { id: "rst_0", checkpointId: "ckpt_b", outcome: "refused", rewind: false, toVersion: null, createdAt: at(11) },
    ],
  });

  it("draws the versions as a staircase in version order, marking the one a restore wrote", () => {
    expect(data.steps.map((s) => s.v)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(data.steps.filter((s) => s.restored).map((s) => s.v)).toEqual([7]);
    expect(data.steps[4]).toMatchObject({ t: at(5).getTime(), status: "WAITING_FOR_TOOL", fromStatus: "RUNNING" });
  });

  it("puts each checkpoint at the version it captured, with its integrity and trigger in words", () => {
    expect(data.checkpoints.map((c) => [c.id, c.v, c.integrity, c.triggerLabel])).toEqual([
      ["ckpt_a", 4, "valid", "On demand"],
      ["ckpt_b", 5, "corrupt", "Before irreversible effect"],
      ["ckpt_c", 6, "unverifiable", "On demand"],
    ]);
  });

  it("places side effects at the version in force when their intent was recorded", () => {
    expect(data.effects).toEqual([
      {
        t: at(5).getTime(),
        v: 5,
        id: "exec_1",
        tool: "payments.refund",
        toolCallId: "refund-1",
        status: "SUCCEEDED",
        irreversible: true,
      },
    ]);
  });

  it("links an applied restore from its checkpoint to the version it wrote; a refused one draws nothing", () => {
    expect(data.restores).toEqual([
      {
        id: "rst_1",
        checkpointId: "ckpt_a",
        rewind: true,
        from: { t: at(4).getTime(), v: 4 },
        to: { t: at(12).getTime(), v: 7 },
      },
    ]);
  });

  it("frames everything with room on each side and round ticks", () => {
    expect(data.domain[0]).toBeLessThan(t0);
    expect(data.domain[1]).toBeGreaterThan(at(12).getTime());
    expect(data.versionDomain).toEqual([0.5, 7.5]);
    expect(data.versionTicks).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(data.tickUnit).toBe("second");
    for (const tick of data.ticks) expect(tick % 2000).toBe(0);
  });

  it("says the same in one sentence", () => {
    expect(data.summary).toBe(
      "Versions 1 to 7; 3 checkpoints (1 valid, 1 corrupt, 1 unverifiable) at versions 4, 5, 6; 1 side effect (payments.refund SUCCEEDED); restore of version 4 written as version 7.",
    );
  });

  it("stays readable with no checkpoint, one, and fifty", () => {
    const none = buildTimeline({ transitions: transitions.slice(0, 1), executions: [], checkpoints: [], restores: [] });
    expect(none.checkpoints).toEqual([]);
    expect(none.domain[1] - none.domain[0]).toBe(60_000);
    expect(none.summary).toBe("Versions 1 to 1; no checkpoints; no side effects.");

    const one = buildTimeline({
      transitions: transitions.slice(0, 1),
      executions: [],
      checkpoints: [checkpoint("ckpt_1", 1, 0, "valid")],
      restores: [],
    });
    expect(one.checkpoints).toHaveLength(1);
    expect(one.versionTicks).toEqual([1]);

    const many = Array.from({ length: 50 }, (_, i) => transition(i + 1, i * 90, i === 0 ? null : "RUNNING", "RUNNING"));
    const fifty = buildTimeline({
      transitions: many,
      executions: [],
      checkpoints: many.map((tr, i) => checkpoint(`ckpt_${i}`, tr.toVersion, i * 90, i === 20 ? "corrupt" : "valid")),
      restores: [],
    });
    expect(fifty.checkpoints).toHaveLength(50);
    expect(fifty.ticks.length).toBeLessThanOrEqual(7);
    expect(fifty.versionTicks).toEqual([5, 10, 15, 20, 25, 30, 35, 40, 45, 50]);
    expect(fifty.tickUnit).toBe("minute");
    expect(fifty.summary).toMatch(/^Versions 1 to 50; 50 checkpoints \(49 valid, 1 corrupt\)/);
  });
});

describe("time axis", () => {
  it("finds the version in force at any moment", () => {
    const steps = buildTimeline({ transitions, executions: [], checkpoints: [], restores: [] }).steps;
    expect(versionAt(steps, at(-5).getTime())).toBe(1);
    expect(versionAt(steps, at(6).getTime())).toBe(5);
    expect(versionAt(steps, at(100).getTime())).toBe(7);
    expect(versionAt([], 0)).toBe(1);
  });

  it("pads the domain and gives a lone moment a minute", () => {
    expect(timeDomain([1000, 2000])).toEqual([970, 2030]);
    expect(timeDomain([5000])).toEqual([-25_000, 35_000]);
  });

  it("picks round steps for every span, with labels at the precision they need", () => {
    expect(timeTicks([t0, t0 + 400])).toEqual({
      ticks: [t0, t0 + 100, t0 + 200, t0 + 300, t0 + 400],
      unit: "millisecond",
    });
    expect(timeTicks([t0 - 1, t0 + 3 * 3600_000]).unit).toBe("minute");
    // Every half hour from 10:00 to 13:00.
    expect(timeTicks([t0 - 1, t0 + 3 * 3600_000]).ticks).toEqual(
      Array.from({ length: 7 }, (_, i) => t0 + i * 1_800_000),
    );
    expect(timeTicks([t0, t0 + 20 * 86_400_000]).unit).toBe("day");
    expect(formatTick(t0 + 7_250, "millisecond")).toBe("10:00:07.250");
    expect(formatTick(t0 + 7_250, "second")).toBe("10:00:07");
    expect(formatTick(t0, "minute")).toBe("10:00");
    expect(formatTick(t0, "day")).toBe("30 Nov");
  });

  it("thins version ticks to round strides", () => {
    expect(integerTicks(1, 3, 8)).toEqual([1, 2, 3]);
    expect(integerTicks(4, 4, 8)).toEqual([4]);
    expect(integerTicks(1, 120, 8)).toEqual([20, 40, 60, 80, 100, 120]);
  });
});
