import { describe, expect, it } from "vitest";
import {
  canMoveExecution,
  executionMoves,
  notAppliedResult,
  retryAdviceOf,
  type ExecutionStatus,
} from "@/lib/model/executions/execution-rules";

const statuses = Object.keys(executionMoves) as ExecutionStatus[];

describe("the execution status machine", () => {
  it("lets the provider's record of the effect overturn a recorded failure, as a reconciliation", () => {
    for (const failed of ["FAILED", "RECONCILED_FAILED"] as const) {
      expect(canMoveExecution(failed, "RECONCILED_SUCCEEDED"), failed).toBe(true);
      // Never a plain SUCCEEDED: the history keeps that this was a correction.
      expect(canMoveExecution(failed, "SUCCEEDED"), failed).toBe(false);
      // A new attempt, a cancellation, or a person past the attempt limit.
      expect(executionMoves[failed]).toEqual(["INTENT_RECORDED", "CANCELLED", "RECONCILED_SUCCEEDED", "NEEDS_HUMAN"]);
    }
  });

  it("keeps successes and cancellations final, and an unknown outcome out of plain success or failure", () => {
    for (const final of ["SUCCEEDED", "RECONCILED_SUCCEEDED", "CANCELLED"] as const)
      expect(executionMoves[final]).toEqual([]);
    expect(canMoveExecution("OUTCOME_UNKNOWN", "SUCCEEDED")).toBe(false);
    expect(canMoveExecution("OUTCOME_UNKNOWN", "FAILED")).toBe(false);
  });

  it("names only its own statuses", () => {
    for (const from of statuses) for (const to of executionMoves[from]) expect(statuses).toContain(to);
  });
});

describe("retryAdviceOf", () => {
  const failed = (over: Partial<Parameters<typeof retryAdviceOf>[0]> = {}) => ({
    tenantId: "default",
    status: "FAILED" as ExecutionStatus,
    attempt: 1,
    tool: "payments.refund",
    result: null,
    error: null,
    ...over,
  });

  it("is null for every status but a settled failure", () => {
    for (const status of statuses.filter((s) => s !== "FAILED" && s !== "RECONCILED_FAILED"))
      expect(retryAdviceOf(failed({ status })), status).toBeNull();
  });

  it.each([
    [
      "the reconciler's never sent",
      failed({ result: notAppliedResult("never_sent", "recorded 31 s ago") }),
      { safe: true, code: "never_sent" },
    ],
    [
      "the reconciler's never applied",
      failed({ status: "RECONCILED_FAILED", result: notAppliedResult("never_applied", "not found") }),
      { safe: true, code: "never_applied" },
    ],
    [
      "the provider's 503 not_processed",
      failed({ result: { reason: "not_processed", retryable: true } }),
      { safe: true, code: "retryable_failure" },
    ],
    [
      "the provider's refusal",
      failed({ result: { reason: "invalid_request", retryable: false }, error: "invalid_request: no such charge" }),
      { safe: false, code: "refused" },
    ],
    ["a failure nobody qualified", failed({ error: "card_declined" }), { safe: false, code: "not_stated" }],
  ] as const)("%s", (_what, execution, expected) => {
    expect(retryAdviceOf(execution)).toMatchObject({ ...expected, attempt: 1, maxAttempts: 2 });
  });

  it("stops at the tool's attempt limit, saying why a retry would otherwise have been safe", () => {
    const last = retryAdviceOf(
      failed({ status: "RECONCILED_FAILED", attempt: 2, result: notAppliedResult("never_applied", "not found") }),
    );
    expect(last).toMatchObject({ safe: false, code: "attempt_limit", attempt: 2, maxAttempts: 2 });
    expect(last?.reason).toContain("never applied");
    expect(last?.reason).toContain("attempt 2 was the last of 2");
    // A refusal stays a refusal at the limit: the limit does not make it safe or hide the provider's word.
    expect(retryAdviceOf(failed({ attempt: 2, result: { retryable: false } }))).toMatchObject({
      safe: false,
      code: "refused",
    });
  });

  it("advises no retry for a tool this server does not know", () => {
    expect(retryAdviceOf(failed({ tool: "mystery.tool", result: { retryable: true } }))).toMatchObject({
      safe: false,
      code: "attempt_limit",
      maxAttempts: 1,
    });
  });
});
