import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { createTenant } from "@/lib/stores/tenants";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { toolOfExecutionOrThrow } from "@/lib/use-cases/tools/tool-of-execution";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { idempotencyWindowMs } from "@/lib/connectors/effects";
import { maxAttemptsOf } from "@/lib/model/executions/tools";
import { agent } from "@/tests/helpers/effects";
import { payoutTool, registered, sentCall } from "@/tests/helpers/registered-tools";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * Each tenant has its own tool registry. Two tenants registering the same
 * name and version with other settings must each be held to their own:
 * the process remembers registered versions for the pure rules (attempt
 * limit, idempotency window), and that memory is one per process, shared
 * by every tenant it serves.
 */
let database: TestDatabase;
let a: Db;
let b: Db;
const platformActor = { identity: "spiffe://verity.local/system/platform-test", kind: "system" as const };

beforeAll(async () => {
  database = await openTestPglite();
  for (const id of ["tools-a", "tools-b"]) {
    await createTenant(database.platformDb, { id, name: id }, platformActor);
    await registerBuiltInWorkflows(database.forTenant(id));
  }
  a = database.forTenant("tools-a");
  b = database.forTenant("tools-b");
  // The same name and version; a's allows 2 attempts within a 1-minute window, b's 5 within a day.
  await registered(
    a,
    payoutTool("shared.payout", { method: "manual" }, { max_attempts: 2, idempotency_window_seconds: 60 }),
  );
  await registered(
    b,
    payoutTool("shared.payout", { method: "manual" }, { max_attempts: 5, idempotency_window_seconds: 86_400 }),
  );
});
afterAll(async () => database?.close());

const failedRetryably = { outcome: "failed", error: "payee's bank was closed", result: { retryable: true } };

describe("one tool name and version in two tenants", () => {
  it("each tenant's call is judged by its own definition: attempt limit and the definition read for it", async () => {
    const callA = await sentCall(a, "shared.payout");
    const callB = await sentCall(b, "shared.payout");
    // Interleaved, so whichever tenant's version the process read last, the other one is asked next.
    const settledA = await recordOutcome(a, callA.id, { attempt_id: callA.attemptId, ...failedRetryably }, agent);
    const settledB = await recordOutcome(b, callB.id, { attempt_id: callB.attemptId, ...failedRetryably }, agent);
    expect(settledA.execution.retry).toMatchObject({ safe: true, maxAttempts: 2 });
    expect(settledB.execution.retry).toMatchObject({ safe: true, maxAttempts: 5 });
    const rowA = await getExecutionRowOrThrow(a, callA.id);
    const rowB = await getExecutionRowOrThrow(b, callB.id);
    expect(rowA.tenantId).toBe("tools-a");
    expect((await toolOfExecutionOrThrow(a, rowA)).max_attempts).toBe(2);
    expect((await toolOfExecutionOrThrow(b, rowB)).max_attempts).toBe(5);
    // b read last: a's is still a's, in the pure rules too.
    expect(maxAttemptsOf("tools-a", "shared.payout", 1)).toBe(2);
    expect(maxAttemptsOf("tools-b", "shared.payout", 1)).toBe(5);
    expect(idempotencyWindowMs("tools-a", "shared.payout", 1)).toBe(60_000);
    expect(idempotencyWindowMs("tools-b", "shared.payout", 1)).toBe(86_400_000);
    // A tenant that registered nothing under the name knows no such version.
    expect(maxAttemptsOf("tools-c", "shared.payout", 1)).toBe(1);
  });

  it("the monitor holds each tenant's unknown outcome to that tenant's idempotency window", async () => {
    const callA = await sentCall(a, "shared.payout");
    const callB = await sentCall(b, "shared.payout");
    for (const [db, call] of [
      [a, callA],
      [b, callB],
    ] as const)
      await recordOutcome(db, call.id, { attempt_id: call.attemptId, outcome: "unknown", error: "timeout" }, agent);
    // Two minutes on: past a's one-minute window, well inside b's day.
    const later = new Date(Date.now() + 2 * 60_000);
    const passA = await runMonitorPass(a, {}, { only: ["unknown_outcomes"], now: later });
    const passB = await runMonitorPass(b, {}, { only: ["unknown_outcomes"], now: later });
    expect(passA.checks.unknown_outcomes).toMatchObject({ violations: 1 });
    expect(passB.checks.unknown_outcomes).toMatchObject({ violations: 0 });
    expect(await a.divergenceAlert.count({ where: { executionId: callA.id, kind: "unknown_outcome_expired" } })).toBe(
      1,
    );
    expect(await b.divergenceAlert.count({ where: { kind: "unknown_outcome_expired" } })).toBe(0);
  });
});
