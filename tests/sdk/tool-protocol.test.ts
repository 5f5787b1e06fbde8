import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reviewRow } from "@/tests/helpers/effects";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import type { Db } from "@/lib/db/client";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";
import {
  executeToolProtocol,
  faultPoints,
  type ExecutionLedger,
  type FaultPoint,
  type FaultPointHook,
  type ToolCallContext,
  type ToolOutcome,
} from "@/sdk";
import { openTestPglite } from "@/tests/helpers/pglite";
import { engineLedger } from "./engine-ledger";

/**
 * executeTool's protocol against the real engine (PGlite) and the real
 * sandbox provider: the order of its fault points, and a crash at each of
 * them followed by a fresh worker, which must never make a second refund.
 */
const agent: Actor = { identity: "spiffe://verity.local/agent/sdk-test", kind: "agent" };
const request = { amount_cents: 700, currency: "usd", charge_id: "ch_sdk", customer_id: "cus_sdk" };

let db: Db;
let close: () => Promise<void>;
let ledger: ExecutionLedger;
let sandbox: Sandbox;
beforeAll(async () => {
  ({ db, close } = await openTestPglite());
  sandbox = await startSandbox({ port: 0 });
  ledger = engineLedger(db, agent, { deps: providerDeps() });
});
afterAll(async () => {
  await sandbox.close();
  await close();
});

function providerDeps() {
  return {
    payments: new SandboxPaymentConnector({ baseUrl: sandbox.url }),
    crm: new SandboxCrmConnector({ baseUrl: sandbox.url }),
  };
}

async function runningTask(): Promise<{ id: string; version: number }> {
  const { task } = await createTask(db, { workflow: "agent-task", intent_id: "refund" }, agent);
  let version = task.version;
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
  return { id: task.id, version };
}

async function refundsOf(taskId: string): Promise<number> {
  const res = await fetch(`${sandbox.url}/v1/refunds`);
  const { data } = (await res.json()) as { data: Array<{ metadata: Record<string, string> }> };
  return data.filter((r) => r.metadata.task_id === taskId).length;
}

function refund(calls: ToolCallContext[]) {
  return async (ctx: ToolCallContext): Promise<ToolOutcome> => {
    calls.push(ctx);
    const out = await new SandboxPaymentConnector({ baseUrl: sandbox.url }).refund({
      idempotencyKey: ctx.idempotencyKey,
      amountCents: request.amount_cents,
      currency: request.currency,
      chargeId: request.charge_id,
      customerId: request.customer_id,
      metadata: { executionId: ctx.executionId, taskId: ctx.taskId },
    });
    if (out.kind === "succeeded")
      return {
        outcome: "succeeded",
        result: { refund_id: out.refund.id },
        evidence: { ...out.evidence, metadata: out.refund.metadata },
      };
    return out.kind === "failed"
      ? { outcome: "failed", error: out.message, retryable: out.retryable }
      : { outcome: "unknown", error: out.message };
  };
}

const input = (task: { id: string; version: number }) => ({
  taskId: task.id,
  toolCallId: "refund",
  tool: "payments.refund" as const,
  request,
  expectedVersion: task.version,
});

class Crash extends Error {}

/** The ledger's writes, in order: what one effect costs in requests to Verity. */
function countingLedger(writes: string[]): ExecutionLedger {
  return {
    ...ledger,
    recordIntent: (taskId, body) => (
      writes.push(body.send ? "recordIntent+send" : "recordIntent"),
      ledger.recordIntent(taskId, body)
    ),
    markSent: (...args) => (writes.push("markSent"), ledger.markSent(...args)),
    recordOutcome: (...args) => (writes.push("recordOutcome"), ledger.recordOutcome(...args)),
  };
}

/**
 * The default sends the attempt with its intent: after_intent already sees
 * it SENT. `sendWithIntent: false` keeps the separate markSent, and the
 * INTENT_RECORDED moment between the two.
 */
const modes = [
  {
    mode: "sent with the intent (default)",
    sendWithIntent: undefined,
    writes: ["recordIntent+send", "recordOutcome"],
    atIntent: "SENT",
  },
  {
    mode: "sendWithIntent: false",
    sendWithIntent: false,
    writes: ["recordIntent", "markSent", "recordOutcome"],
    atIntent: "INTENT_RECORDED",
  },
] as const;

describe.each(modes)("executeTool fault points, $mode", ({ sendWithIntent, writes, atIntent }) => {
  const inputOf = (task: { id: string; version: number }) => ({ ...input(task), sendWithIntent });

  it("fire in order, each at the moment its name says; the effect costs these ledger writes", async () => {
    const task = await runningTask();
    const seen: string[] = [];
    const hook: FaultPointHook = async (point, ctx) => {
      const execution = await ledger.getExecution(ctx.executionId);
      seen.push(`${point}:${execution.status}:${await refundsOf(ctx.taskId)}`);
    };
    const written: string[] = [];
    const result = await executeToolProtocol(countingLedger(written), inputOf(task), refund([]), {
      faultPoint: hook,
      defaultCallTimeoutMs: 5_000,
    });
    expect(result.kind).toBe("succeeded");
    expect(seen).toEqual([
      `after_intent:${atIntent}:0`,
      "after_sent:SENT:0",
      "after_call:SENT:1",
      "after_outcome:SUCCEEDED:1",
    ]);
    expect(written).toEqual(writes);
  });

  it("is not reached at all for a receipt", async () => {
    const task = await runningTask();
    const first = await executeToolProtocol(ledger, inputOf(task), refund([]), { defaultCallTimeoutMs: 5_000 });
    const seen: FaultPoint[] = [];
    const calls: ToolCallContext[] = [];
    const replay = await executeToolProtocol(
      ledger,
      { ...inputOf(task), expectedVersion: first.task.version },
      refund(calls),
      {
        faultPoint: (p) => void seen.push(p),
        defaultCallTimeoutMs: 5_000,
      },
    );
    expect(replay.kind).toBe("receipt");
    expect(seen).toEqual([]);
    expect(calls).toEqual([]);
  });

  const afterCrash: Record<FaultPoint, { kind: string; calls: number }> = {
    // Never sent (INTENT_RECORDED): the same attempt goes out now. Sent with
    // the intent, it may have left: unresolved until the server reconciles it.
    after_intent: atIntent === "SENT" ? { kind: "unresolved", calls: 0 } : { kind: "succeeded", calls: 1 },
    // It may have left: unresolved until the server reconciles it; nothing is sent.
    after_sent: { kind: "unresolved", calls: 0 },
    // It did leave and the refund exists: still unresolved, still nothing sent.
    after_call: { kind: "unresolved", calls: 0 },
    // Recorded: the receipt.
    after_outcome: { kind: "receipt", calls: 0 },
  };

  it.each(faultPoints.map((p) => [p]))("a crash at %s, then a fresh worker: at most one refund", async (point) => {
    const task = await runningTask();
    const crashing: FaultPointHook = (p) => {
      if (p === point) throw new Crash(p);
    };
    await expect(
      executeToolProtocol(ledger, inputOf(task), refund([]), { faultPoint: crashing, defaultCallTimeoutMs: 5_000 }),
    ).rejects.toBeInstanceOf(Crash);
    const madeBefore = await refundsOf(task.id);
    expect(madeBefore).toBe(point === "after_intent" || point === "after_sent" ? 0 : 1);

    const current = await ledger.getTask(task.id);
    const calls: ToolCallContext[] = [];
    const resumed = await executeToolProtocol(
      ledger,
      { ...inputOf(task), expectedVersion: current.version },
      refund(calls),
      { defaultCallTimeoutMs: 5_000 },
    );
    expect({ kind: resumed.kind, calls: calls.length }).toEqual(afterCrash[point]);
    expect(await refundsOf(task.id)).toBe(afterCrash[point].kind === "unresolved" && madeBefore === 0 ? 0 : 1);
    expect(resumed.execution.attempt).toBe(1);
  });
});

describe("executeTool outcomes", () => {
  it("a tool that claims a refund it never made is UNKNOWN, not success; the reconciler then finds nothing and a retry is safe", async () => {
    const task = await runningTask();
    const claimed = await executeToolProtocol(
      ledger,
      { taskId: task.id, toolCallId: "refund", tool: "payments.refund", request, expectedVersion: task.version },
      async (ctx) => ({ outcome: "succeeded", evidence: { execution_id: ctx.executionId } }),
      { defaultCallTimeoutMs: 5_000 },
    );
    expect(claimed).toMatchObject({
      kind: "unknown",
      execution: { status: "OUTCOME_UNKNOWN" },
      task: { status: "RECONCILING" },
    });
    if (claimed.kind !== "unknown") return;
    expect(claimed.error).toContain("the provider's record does not confirm the success the tool reported");
    expect(await refundsOf(task.id)).toBe(0);
    const reconciled = await reconcileExecution(db, claimed.execution.id, providerDeps());
    expect(reconciled).toMatchObject({ action: "reconciled_failed", lookup: "not_found" });
  });

  it("a call that returns no valid outcome is UNKNOWN", async () => {
    const task = await runningTask();
    const result = await executeToolProtocol(
      ledger,
      input(task),
      async () => ({ outcome: "succeeded" }) as unknown as ToolOutcome,
      { defaultCallTimeoutMs: 5_000 },
    );
    expect(result.kind).toBe("unknown");
    expect(result.task.status).toBe("RECONCILING");
  });

  const notProcessed: ToolOutcome = {
    outcome: "failed",
    error: "not_processed",
    retryable: true,
    result: { reason: "not_processed" },
  };

  it("retries a failure the provider says applied nothing, under the same key, and one refund is made", async () => {
    const task = await runningTask();
    const calls: ToolCallContext[] = [];
    const real = refund(calls);
    const result = await executeToolProtocol(
      ledger,
      input(task),
      async (ctx) => (calls.length === 0 ? (calls.push(ctx), notProcessed) : real(ctx)),
      { defaultCallTimeoutMs: 5_000 },
    );
    expect(result).toMatchObject({
      kind: "succeeded",
      execution: { status: "SUCCEEDED", attempt: 2 },
      task: { status: "RUNNING" },
    });
    expect(calls.map((c) => [c.attemptId, c.idempotencyKey])).toEqual([
      [`${result.execution.id}.1`, result.execution.idempotency_key],
      [`${result.execution.id}.2`, result.execution.idempotency_key],
    ]);
    expect(await refundsOf(task.id)).toBe(1);
  });

  it("with retry: false, returns the first failure with the server's advice, and the caller's retry goes under the same key", async () => {
    const task = await runningTask();
    const failed = await executeToolProtocol(ledger, { ...input(task), retry: false }, async () => notProcessed, {
      defaultCallTimeoutMs: 5_000,
    });
    expect(failed).toMatchObject({
      kind: "failed",
      retryable: true,
      execution: {
        status: "FAILED",
        attempt: 1,
        result: { reason: "not_processed", retryable: true },
        retry: { safe: true, code: "retryable_failure", attempt: 1, max_attempts: 2 },
      },
      task: { status: "RUNNING" },
    });
    const calls: ToolCallContext[] = [];
    const retried = await executeToolProtocol(
      ledger,
      { ...input(task), expectedVersion: failed.task.version },
      refund(calls),
      { defaultCallTimeoutMs: 5_000 },
    );
    expect(retried).toMatchObject({
      kind: "succeeded",
      execution: { attempt: 2, idempotency_key: failed.execution.idempotency_key },
    });
    expect(calls.map((c) => c.attemptId)).toEqual([`${failed.execution.id}.2`]);
  });

  it("past the tool's attempt limit, hands the call to a review instead of retrying: nothing dropped, nothing sent again", async () => {
    const task = await runningTask();
    const calls: ToolCallContext[] = [];
    const result = await executeToolProtocol(ledger, input(task), async (ctx) => (calls.push(ctx), notProcessed), {
      defaultCallTimeoutMs: 5_000,
    });
    expect(calls).toHaveLength(2);
    expect(result).toMatchObject({
      kind: "failed",
      retryable: false,
      execution: { status: "NEEDS_HUMAN", attempt: 2, retry: null },
      task: { status: "WAITING_FOR_HUMAN" },
    });
    const review = await reviewRow(db, { executionId: result.execution.id });
    expect(review).toMatchObject({ status: "OPEN", taskId: task.id });
    expect(review.reason).toContain("attempt 2 was the last of 2");
    expect(await refundsOf(task.id)).toBe(0);
  });

  it("does not retry a refusal the provider would repeat", async () => {
    const task = await runningTask();
    const calls: ToolCallContext[] = [];
    const refused: ToolOutcome = {
      outcome: "failed",
      error: "invalid_request: charge unknown",
      retryable: false,
      result: { reason: "invalid_request" },
    };
    const result = await executeToolProtocol(ledger, input(task), async (ctx) => (calls.push(ctx), refused), {
      defaultCallTimeoutMs: 5_000,
    });
    expect(calls).toHaveLength(1);
    expect(result).toMatchObject({
      kind: "failed",
      retryable: false,
      execution: { status: "FAILED", retry: { safe: false, code: "refused" } },
      task: { status: "RUNNING" },
    });
  });

  it("a success that arrives after the reconciler settled the attempt never applied is the provider's word: RECONCILED_SUCCEEDED, not a failure", async () => {
    const task = await runningTask();
    const real = refund([]);
    // The provider is slow: the server's SENT timeout passes, its lookup finds nothing yet, and it settles RECONCILED_FAILED; then the refund is made.
    const result = await executeToolProtocol(
      ledger,
      input(task),
      async (ctx) => {
        const settled = await reconcileExecution(db, ctx.executionId, providerDeps(), {
          now: new Date(Date.now() + 31_000),
        });
        expect(settled).toMatchObject({ action: "reconciled_failed", execution: { status: "RECONCILED_FAILED" } });
        return real(ctx);
      },
      { defaultCallTimeoutMs: 5_000 },
    );
    expect(result).toMatchObject({
      kind: "succeeded",
      execution: {
        status: "RECONCILED_SUCCEEDED",
        attempt: 1,
        evidence: { correction: "success_after_failure", earlier: { status: "RECONCILED_FAILED" } },
      },
    });
    expect(await refundsOf(task.id)).toBe(1);
    // A receipt: the call is never made again.
    const replay = await executeToolProtocol(
      ledger,
      { ...input(task), expectedVersion: result.task.version },
      refund([]),
      { defaultCallTimeoutMs: 5_000 },
    );
    expect(replay.kind).toBe("receipt");
  });
});
