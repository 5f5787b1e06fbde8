import { describe, expect, it } from "vitest";
import { agentTaskV1 } from "@/lib/model/workflows/agent-task";
import { deliveryV1 } from "@/lib/model/workflows/delivery";
import { summarizePatch } from "@/lib/adapters/console/shared/patch-summary";
import { isReasonRequired, statusTone, usesGates } from "@/lib/adapters/console/shared/status";
import { parseTaskListParams, taskListHref } from "@/lib/adapters/console/tasks/task-list-query";
import { describeGuard, formatRelativeTime, shortIdentity } from "@/lib/adapters/console/shared/format";

describe("task list URL", () => {
  const names = ["agent-task", "delivery"];
  it("reads filters from the query string, dropping empty values and unknown workflows", () => {
    expect(
      parseTaskListParams({ status: "RUNNING", workflow: "agent-task", q: "  task_01 ", cursor: "abc" }, names),
    ).toEqual({
      status: "RUNNING",
      workflow: "agent-task",
      q: "task_01",
      cursor: "abc",
    });
    expect(parseTaskListParams({ status: "", workflow: "no-such-workflow", q: ["a", "b"] }, names)).toEqual({
      status: undefined,
      workflow: undefined,
      q: "a",
      cursor: undefined,
    });
    expect(parseTaskListParams({ q: "x".repeat(500) }, names)).toEqual({
      status: undefined,
      workflow: undefined,
      q: undefined,
      cursor: undefined,
    });
  });

  it("writes only the filters that are set, in a stable order", () => {
    expect(taskListHref({})).toBe("/tasks");
    expect(taskListHref({ q: "task 1", workflow: "delivery", cursor: "c1" })).toBe(
      "/tasks?workflow=delivery&q=task+1&cursor=c1",
    );
  });
});

describe("status presentation", () => {
  it("colours by what the definition says first, then by the name", () => {
    expect(statusTone(agentTaskV1, "COMPLETED")).toBe("success");
    expect(statusTone(agentTaskV1, "PERMANENTLY_FAILED")).toBe("danger");
    expect(statusTone(agentTaskV1, "CANCELLED")).toBe("neutral");
    expect(statusTone(agentTaskV1, "WAITING_FOR_HUMAN")).toBe("attention");
    expect(statusTone(agentTaskV1, "RECOVERING")).toBe("warning");
    expect(statusTone(agentTaskV1, "RUNNING")).toBe("active");
    expect(statusTone(undefined, "anything")).toBe("active");
  });

  it("demands a reason for final non-success states only", () => {
    expect(isReasonRequired(agentTaskV1, "CANCELLED")).toBe(true);
    expect(isReasonRequired(agentTaskV1, "PERMANENTLY_FAILED")).toBe(true);
    expect(isReasonRequired(agentTaskV1, "COMPLETED")).toBe(false);
    expect(isReasonRequired(agentTaskV1, "HUMAN_RESOLVED")).toBe(false);
  });

  it("shows gates only for workflows whose rules use them", () => {
    expect(usesGates(deliveryV1)).toBe(true);
    expect(usesGates(agentTaskV1)).toBe(false);
  });
});

describe("summarizePatch", () => {
  it("lists each kind of change in words", () => {
    expect(
      summarizePatch({
        gates: { plan_approved: true, review_passed: false },
        artifacts: { code_files: ["a.ts", "b.ts"], implementation_plan: "plan.md" },
        active_agents: ["spiffe://verity.local/agent/refund-bot"],
        budget: { currency_spent_usd: 1.5, tokens_spent: 1200 },
        subtasks: [{ id: "lookup-order", status: "COMPLETED" }],
      }),
    ).toEqual([
      "gates: plan_approved ✓, review_passed ✗",
      "artifacts: code_files (2 files), implementation_plan",
      "active agents: agent/refund-bot",
      "budget: spent $1.50, 1,200 tokens",
      "subtask lookup-order: COMPLETED",
    ]);
    expect(summarizePatch({})).toEqual([]);
    expect(summarizePatch({ completed_agents: [] })).toEqual(["completed agents: none"]);
  });
});

describe("format", () => {
  it("shortens SPIFFE ids and describes guards", () => {
    expect(shortIdentity("spiffe://verity.local/user/operator")).toBe("user/operator");
    expect(shortIdentity("not-a-spiffe-id")).toBe("not-a-spiffe-id");
    expect(describeGuard({ kind: "gates_true", gates: ["plan_approved"] })).toBe("gate plan_approved true");
    expect(describeGuard({ kind: "mandatory_subtasks_completed" })).toBe("every mandatory subtask completed");
  });
});

describe("formatRelativeTime", () => {
  const now = new Date("2026-12-02T13:00:00Z");
  const ago = (ms: number) => formatRelativeTime(new Date(now.getTime() - ms), now);
  it("reads past times in the console's duration format, truncated", () => {
    expect(ago(4_999)).toBe("just now");
    expect(ago(5_000)).toBe("5 s ago");
    expect(ago(59_999)).toBe("59 s ago");
    expect(ago(12 * 60_000 + 59_000)).toBe("12 min ago");
    expect(ago((3 * 60 + 5) * 60_000)).toBe("3 h 5 min ago");
    expect(ago(29 * 24 * 3_600_000)).toBe("29 d ago");
  });
  it("reads future times (an expiry) forward, and clocks a little apart as now", () => {
    expect(ago(-3_000)).toBe("just now");
    expect(ago(-2 * 24 * 3_600_000)).toBe("in 2 d");
  });
  it("gives the day itself past 30 days", () => {
    expect(ago(30 * 24 * 3_600_000)).toBe("02 Nov 2026");
    expect(ago(-40 * 24 * 3_600_000)).toBe("11 Jan 2027");
  });
});
