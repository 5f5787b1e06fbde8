import { describe, expect, it } from "vitest";
import { alertKinds, alertSeverityOf, blockingKinds, isBlocking } from "@/lib/model/alerts/alert-kinds";
import { alertsHref, parseAlertFilters } from "@/lib/adapters/console/alerts/alerts";
import { formatDuration } from "@/lib/core/format-duration";

describe("alert kinds", () => {
  it("every kind has a severity; the spec's critical risks are critical", () => {
    for (const kind of alertKinds) expect(["critical", "high", "medium"]).toContain(alertSeverityOf[kind]);
    expect(alertSeverityOf.effect_missing_at_provider).toBe("critical");
    expect(alertSeverityOf.stale_restore_attempt).toBe("critical");
    expect(alertSeverityOf.unknown_outcome_expired).toBe("critical");
    expect(alertSeverityOf.completed_with_open_mandatory_subtask).toBe("high");
  });

  it("blocks only while OPEN or ESCALATED, and only the kinds that doubt an irreversible effect", () => {
    expect(isBlocking({ kind: "effect_mismatch", status: "OPEN" })).toBe(true);
    expect(isBlocking({ kind: "effect_mismatch", status: "ESCALATED" })).toBe(true);
    expect(isBlocking({ kind: "effect_mismatch", status: "ACKNOWLEDGED" })).toBe(false);
    expect(isBlocking({ kind: "effect_mismatch", status: "RESOLVED" })).toBe(false);
    expect(isBlocking({ kind: "stale_write", status: "OPEN" })).toBe(false);
    expect(isBlocking({ kind: "something_else", status: "OPEN" })).toBe(false);
    expect(blockingKinds.has("unknown_outcome_expired")).toBe(true);
  });
});

describe("alert filters in the URL", () => {
  it("keeps the dashboard's params, drops unknown values and says so", () => {
    const { filters, ignored } = parseAlertFilters({
      status: "open",
      kind: "stale_write",
      task: "task_1",
      severity: "bogus",
    });
    expect(filters).toEqual({ status: "OPEN", kind: "stale_write", task: "task_1" });
    expect(ignored).toEqual(['severity "bogus"']);
    expect(alertsHref(filters)).toBe("/alerts?status=OPEN&kind=stale_write&task=task_1");
    expect(alertsHref({})).toBe("/alerts");
  });

  it("keeps oldest first in the URL and leaves the default out", () => {
    expect(parseAlertFilters({ order: "asc" }).filters).toEqual({ order: "asc" });
    expect(parseAlertFilters({ order: "desc" }).filters).toEqual({});
    expect(parseAlertFilters({ order: "sideways" }).filters).toEqual({});
    expect(alertsHref({ status: "OPEN", order: "asc" })).toBe("/alerts?status=OPEN&order=asc");
  });

  it("ages in words", () => {
    expect(formatDuration(42_000)).toBe("42 s");
    expect(formatDuration(5 * 60_000)).toBe("5 min");
    expect(formatDuration(3 * 3_600_000 + 60_000)).toBe("3 h 1 min");
    expect(formatDuration(3 * 86_400_000)).toBe("3 d");
  });
});
