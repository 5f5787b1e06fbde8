import { describe, expect, it } from "vitest";
import { AppError } from "@/lib/core/errors";
import { problemFromAppError } from "@/lib/adapters/http/problem";
import { apiErrorOf, isRetryableStatus, parseProblem, VerityApiError } from "@/sdk";

describe("problem parsing", () => {
  it("reads the server's own problems, extensions included", () => {
    const problem = problemFromAppError(
      new AppError("invariant_violated", "retry refused", {
        violations: [{ invariant: "unknown_outcome_reconciled_before_retry", message: "x" }],
        executionId: "exec_1",
      }),
      "/api/v1/tasks/t/executions",
    );
    const error = apiErrorOf(422, "application/problem+json", JSON.stringify(problem));
    expect(error).toBeInstanceOf(VerityApiError);
    expect(error).toMatchObject({
      status: 422,
      code: "invariant_violated",
      type: "https://verity.dev/problems/invariant-violated",
      detail: "retry refused",
    });
    expect(error.hasInvariant("unknown_outcome_reconciled_before_retry")).toBe(true);
    expect(error.problem.execution_id).toBe("exec_1");
  });

  it("takes current_version and current_status from a version conflict", () => {
    const body = JSON.stringify(
      problemFromAppError(new AppError("version_conflict", "stale", { currentVersion: 4, currentStatus: "RUNNING" })),
    );
    expect(apiErrorOf(409, "application/problem+json; charset=utf-8", body)).toMatchObject({
      code: "version_conflict",
      currentVersion: 4,
      currentStatus: "RUNNING",
    });
  });

  it("turns anything else into an error typed by its status, never a crash", () => {
    expect(parseProblem("text/html", "<h1>Bad gateway</h1>")).toBeNull();
    expect(parseProblem("application/problem+json", "{not json")).toBeNull();
    expect(parseProblem("application/problem+json", JSON.stringify({ title: "no type" }))).toBeNull();
    expect(apiErrorOf(502, "text/html", "<h1>Bad gateway</h1>")).toMatchObject({
      status: 502,
      code: "http_502",
      type: "about:blank",
    });
    expect(apiErrorOf(503, null, "")).toMatchObject({
      code: "http_503",
      detail: "The server answered without a body.",
    });
  });

  it("drops malformed violations and field errors rather than trusting them", () => {
    const body = JSON.stringify({
      type: "https://verity.dev/problems/validation-failed",
      title: "t",
      status: 400,
      detail: "d",
      errors: [{ field: "a", message: "m" }, { field: 1 }],
      violations: "nope",
    });
    expect(apiErrorOf(400, "application/problem+json", body)).toMatchObject({
      errors: [{ field: "a", message: "m" }],
      violations: [],
    });
  });

  it("retries only answers that say nothing about the request", () => {
    expect([500, 501, 502, 503, 504, 409, 429].filter(isRetryableStatus)).toEqual([502, 503, 504]);
  });
});
