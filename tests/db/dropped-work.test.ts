import { describe, expect, it } from "vitest";
import { intentIdOf, orderOf, taskIdOf, type Order } from "@/programs/agent/order";
import { REFUND_CALL, refundSubtasks } from "@/programs/agent/plan";
import { RefundAgent, type TaskReport } from "@/programs/agent/refund-agent";
import { executionResource } from "@/lib/adapters/api/execution-resources";
import { listExecutionEvents, listExecutions } from "@/lib/stores/execution-store";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import type { Actor } from "@/lib/model/actor";
import {
  executeToolProtocol,
  VerityNetworkError,
  type ExecuteToolInput,
  type FaultPoint,
  type RecordIntentBody,
  type ToolCallContext,
  type ToolExecution,
  type ToolOutcome,
} from "@/sdk";
import {
  afterTimeout,
  agent as refundBot,
  alice,
  connectorsFor,
  refund as refundRequest,
  refundExecution,
  refundsUnderKey,
  reviewRow,
} from "@/tests/helpers/effects";
import { engineLedger } from "@/tests/sdk/engine-ledger";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { EngineBackedClient } from "@/tests/postgres/failover-engine-client";
import { sandbox } from "@/tests/sandbox/helpers";

/**
 * No work silently dropped: a refund the provider confirms never happened
 * (the reconciler settled it "never sent" or "never applied") is retried
 * under the same key by the demo refund agent, and ends with exactly one
 * refund; past the refund's attempt limit it goes to a review. Never FAILED
 * with no refund, no review and no alert — what 6 of 41 chaos tasks did.
 *
 * The unmodified agent (programs/agent) runs in-process over the engine on
 * PGlite (EngineBackedClient: the routes' own functions and serializers)
 * against the real sandbox provider; a crash is the agent's process
 * stopping at a named fault point, a server kill is a committed write whose
 * answer never arrives.
 */

const db = useTestDatabase();
const agentActor: Actor = { identity: "spiffe://verity.test/agent/dropped-work", kind: "agent" };

class Crash extends Error {}

/** Faults of the next refund attempt only: then the agent runs clean, as a restarted process would. */
interface NextFault {
  /** The process dies here (fault points of sdk/tool-protocol.ts). */
  crashAt?: FaultPoint;
  /** The call never reaches the provider, and the worker cannot tell: its outcome is unknown. */
  callThrowsBeforeSending?: boolean;
  /** The server commits the intent and dies before answering; every retry of the SDK goes unanswered. */
  intentAnswerLost?: boolean;
  /** The attempt is sent by a separate markSent (`sendWithIntent: false`), not with its intent. */
  twoStep?: boolean;
}

class FaultyClient extends EngineBackedClient {
  next: NextFault = {};

  constructor(sandboxUrl: string) {
    super(db, agentActor, { callTimeoutMs: 5_000, provider: connectorsFor(sandboxUrl) });
  }

  override async recordIntent(taskId: string, body: RecordIntentBody) {
    const result = await super.recordIntent(taskId, body);
    if (body.tool_call_id === REFUND_CALL && this.take("intentAnswerLost"))
      throw new VerityNetworkError(
        "POST /api/v1/tasks/…/executions: no answer after 4 attempts (the server was killed)",
        4,
      );
    return result;
  }

  override executeTool(
    input: ExecuteToolInput,
    call: (ctx: ToolCallContext) => Promise<ToolOutcome>,
  ): Promise<ToolExecution> {
    const refund = input.toolCallId === REFUND_CALL;
    const crashAt = refund ? this.take("crashAt") : undefined;
    const throwsBeforeSending = refund && this.take("callThrowsBeforeSending");
    const twoStep = refund && this.take("twoStep");
    return executeToolProtocol(
      this,
      twoStep ? { ...input, sendWithIntent: false } : input,
      throwsBeforeSending ? () => Promise.reject(new Error("socket closed before the request was written")) : call,
      {
        defaultCallTimeoutMs: 5_000,
        faultPoint: (point) => {
          if (point === crashAt) throw new Crash(point);
        },
      },
    );
  }

  private take<K extends keyof NextFault>(key: K): NextFault[K] {
    const value = this.next[key];
    delete this.next[key];
    return value;
  }
}

let orders = 0;

async function setUp() {
  const s = await sandbox();
  const client = new FaultyClient(s.url);
  const agent = new RefundAgent({
    client,
    sandboxUrl: s.url,
    identity: agentActor.identity,
    callTimeoutMs: 5_000,
    leaseTtlSeconds: 30,
    faults: [],
    faultRate: 0,
    seed: 1,
    log: () => {},
  });
  const order: Order = orderOf(`dropped-${process.pid}-${++orders}`, 2_750, "usd");
  return { s, client, agent, order, taskId: taskIdOf(order) };
}

/** The server's reconciler, run as its background loop would once the dead worker's rows are stale. */
async function reconcileRefund(taskId: string, sandboxUrl: string) {
  const refund = (await listExecutions(db, taskId)).find((e) => e.toolCallId === REFUND_CALL)!;
  return reconcileExecution(db, refund.id, connectorsFor(sandboxUrl), { now: afterTimeout() });
}

async function refundOf(taskId: string) {
  return (await listExecutions(db, taskId)).find((e) => e.toolCallId === REFUND_CALL)!;
}

/** Retried under the same key and completed: exactly one refund at the provider, two attempts of one execution. */
async function expectRetriedOnce(report: TaskReport, sandboxUrl: string) {
  expect(report, report.detail).toMatchObject({
    outcome: "completed",
    status: "COMPLETED",
    refund: { status: "SUCCEEDED", attempts: 2 },
  });
  const refund = await refundOf(report.taskId);
  expect(await refundsUnderKey(sandboxUrl, refund.idempotencyKey)).toBe(1);
  expect(refund.attemptId).toBe(`${refund.id}.2`);
}

describe("a refund the provider confirms never happened is retried by the agent, never dropped", () => {
  it("kill between the intent and a separate markSent: the reconciler settles it never sent, retry_safe; the resumed agent retries under the same key: one refund", async () => {
    const { s, client, agent, order, taskId } = await setUp();
    client.next = { crashAt: "after_intent", twoStep: true };
    expect((await agent.run(order)).outcome).toBe("error");

    const settled = await reconcileRefund(taskId, s.url);
    expect(settled).toMatchObject({
      action: "never_sent",
      execution: { status: "FAILED" },
      task: { status: "RUNNING" },
    });
    expect(executionResource(settled.execution).retry).toMatchObject({
      safe: true,
      code: "never_sent",
      attempt: 1,
      max_attempts: 2,
    });

    await expectRetriedOnce(await agent.resume(taskId), s.url);
  });

  // Sent with the intent (the SDK's default), a lost answer leaves SENT: the provider is asked first.
  it.each([
    { shape: "sent with the intent", twoStep: false, status: "SENT", action: "reconciled_failed" },
    { shape: "intent, then markSent", twoStep: true, status: "INTENT_RECORDED", action: "never_sent" },
  ])(
    "a server killed mid-run (the intent committed, its answer lost), $shape: $status, $action, then retried: one refund",
    async ({ twoStep, status, action }) => {
      const { s, client, agent, order, taskId } = await setUp();
      client.next = { intentAnswerLost: true, twoStep };
      const first = await agent.run(order);
      expect(first).toMatchObject({ outcome: "error", status: "WAITING_FOR_TOOL", refund: { status } });

      expect(await reconcileRefund(taskId, s.url)).toMatchObject({ action });
      await expectRetriedOnce(await agent.resume(taskId), s.url);
    },
  );

  // With the intent sending, the moment after it is already after the send.
  it.each(["after_intent", "after_sent"] as const)(
    "kill at %s, before the call: not found at the provider, never applied, retry_safe; retried: one refund",
    async (crashAt) => {
      const { s, client, agent, order, taskId } = await setUp();
      client.next = { crashAt };
      expect((await agent.run(order)).outcome).toBe("error");

      const settled = await reconcileRefund(taskId, s.url);
      expect(settled).toMatchObject({
        action: "reconciled_failed",
        lookup: "not_found",
        execution: { status: "RECONCILED_FAILED" },
        task: { status: "RUNNING" },
      });
      expect(executionResource(settled.execution).retry).toMatchObject({ safe: true, code: "never_applied" });

      await expectRetriedOnce(await agent.resume(taskId), s.url);
    },
  );

  it("an unknown outcome the provider then denies: RECONCILED_FAILED never applied, retried: one refund", async () => {
    const { s, client, agent, order, taskId } = await setUp();
    client.next = { callThrowsBeforeSending: true };
    expect(await agent.run(order)).toMatchObject({
      outcome: "reconciling",
      status: "RECONCILING",
      refund: { status: "OUTCOME_UNKNOWN" },
    });

    // Due at once: the outcome is known to be unknown.
    const settled = await reconcileExecution(db, (await refundOf(taskId)).id, connectorsFor(s.url));
    expect(settled).toMatchObject({
      action: "reconciled_failed",
      from: "OUTCOME_UNKNOWN",
      task: { status: "RUNNING" },
    });

    await expectRetriedOnce(await agent.resume(taskId), s.url);
  });

  it("never applied again on the last attempt: handed to a review, the task waiting for a person with the reason; nothing sent a third time", async () => {
    const { s, client, agent, order, taskId } = await setUp();
    client.next = { crashAt: "after_sent" };
    await agent.run(order);
    await reconcileRefund(taskId, s.url);
    client.next = { crashAt: "after_sent" };
    expect((await agent.resume(taskId)).outcome).toBe("error");

    const settled = await reconcileRefund(taskId, s.url);
    expect(settled).toMatchObject({
      action: "reconciled_failed",
      execution: { status: "NEEDS_HUMAN", attempt: 2 },
      task: { status: "WAITING_FOR_HUMAN" },
    });
    const review = await reviewRow(db, { executionId: settled.executionId });
    expect(review).toMatchObject({ status: "OPEN", id: settled.reviewId });
    expect(review.reason).toContain("attempt 2 was the last of 2");
    expect((await listExecutionEvents(db, settled.executionId)).slice(-2).map((e) => e.toStatus)).toEqual([
      "RECONCILED_FAILED",
      "NEEDS_HUMAN",
    ]);

    expect(await agent.resume(taskId)).toMatchObject({ outcome: "review", status: "WAITING_FOR_HUMAN" });
    expect(await refundsUnderKey(s.url, (await refundOf(taskId)).idempotencyKey)).toBe(0);

    // The person's decision: one more attempt under the same key, which the agent then completes from.
    const decided = await decideReview(
      db,
      review.id,
      { expected_version: review.version, decision: "approve_execute", reason: "never applied twice; try once more" },
      alice,
      connectorsFor(s.url),
    );
    expect(decided).toMatchObject({
      executed: true,
      outcome: "succeeded",
      execution: { status: "SUCCEEDED", attempt: 3 },
      task: { status: "VALIDATING" },
    });
    expect(await agent.resume(taskId)).toMatchObject({ outcome: "completed", status: "COMPLETED" });
    expect(await refundsUnderKey(s.url, (await refundOf(taskId)).idempotencyKey)).toBe(1);
  });
});

describe("the reconciler's two 'nothing happened' settlements say a retry is safe, and executeTool retries them under the same key", () => {
  /** The refund call of tests/helpers/effects.ts (tool_call_id refund-1), made through the SDK's executeTool against the sandbox. */
  async function retryThroughSdk(taskId: string, sandboxUrl: string) {
    const task = await db.task.findFirstOrThrow({ where: { id: taskId } });
    const calls: ToolCallContext[] = [];
    const provider = connectorsFor(sandboxUrl);
    const payments = provider.payments;
    const result = await executeToolProtocol(
      engineLedger(db, refundBot, { deps: provider }),
      {
        taskId,
        toolCallId: "refund-1",
        tool: "payments.refund",
        request: refundRequest,
        expectedVersion: task.version,
      },
      async (ctx): Promise<ToolOutcome> => {
        calls.push(ctx);
        const out = await payments.refund({
          idempotencyKey: ctx.idempotencyKey,
          amountCents: 2500,
          currency: "usd",
          chargeId: "ch_1",
          customerId: "cus_1",
          metadata: { executionId: ctx.executionId, taskId },
        });
        return out.kind === "succeeded"
          ? {
              outcome: "succeeded",
              result: { refund_id: out.refund.id },
              evidence: { ...out.evidence, metadata: out.refund.metadata },
            }
          : { outcome: "unknown", error: out.message };
      },
      { defaultCallTimeoutMs: 5_000 },
    );
    return { result, calls };
  }

  it("never sent (an intent older than the SENT timeout): FAILED with retry_safe; the retry is attempt 2 of the same key: one refund", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db, { sent: false });
    const settled = await reconcileExecution(db, execution.id, connectorsFor(s.url), { now: afterTimeout() });
    expect(settled).toMatchObject({ action: "never_sent", task: { status: "RUNNING" } });
    expect(executionResource(settled.execution)).toMatchObject({
      status: "FAILED",
      result: { reason: "never_sent", retry_safe: true },
      retry: { safe: true, code: "never_sent" },
    });

    const { result, calls } = await retryThroughSdk(execution.taskId, s.url);
    expect(result).toMatchObject({
      kind: "succeeded",
      execution: { status: "SUCCEEDED", attempt: 2, idempotency_key: execution.idempotencyKey },
    });
    expect(calls.map((c) => c.attemptId)).toEqual([`${execution.id}.2`]);
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(1);
  });

  it("never applied (a SENT the provider has nothing for): RECONCILED_FAILED with retry_safe; the retry is attempt 2 of the same key: one refund", async () => {
    const s = await sandbox();
    const execution = await refundExecution(db);
    const settled = await reconcileExecution(db, execution.id, connectorsFor(s.url), { now: afterTimeout() });
    expect(settled).toMatchObject({ action: "reconciled_failed", task: { status: "RUNNING" } });
    expect(executionResource(settled.execution)).toMatchObject({
      status: "RECONCILED_FAILED",
      result: { reason: "never_applied", retry_safe: true },
      retry: { safe: true, code: "never_applied" },
    });

    const { result } = await retryThroughSdk(execution.taskId, s.url);
    expect(result).toMatchObject({ kind: "succeeded", execution: { status: "SUCCEEDED", attempt: 2 } });
    expect(await refundsUnderKey(s.url, execution.idempotencyKey)).toBe(1);
  });
});

describe("an order's task created before its subtasks named the amount", () => {
  it("is carried on by a new run for the same order, not refused; another order's task under the same id still is", async () => {
    const { s, client, agent, order, taskId } = await setUp();
    // As the agent created it before: the same intent, the subtasks' old titles.
    await client.createTask({ workflow: "agent-task", taskId, intentId: intentIdOf(order), subtasks: refundSubtasks });
    const report = await agent.run(order);
    expect(report, report.detail).toMatchObject({ outcome: "completed" });
    expect(await refundsUnderKey(s.url, (await refundOf(taskId)).idempotencyKey)).toBe(1);

    const other = orderOf(`dropped-other-${process.pid}`, 1_000, "usd");
    await client.createTask({
      workflow: "agent-task",
      taskId: taskIdOf(other),
      intentId: "someone-elses-intent",
      subtasks: refundSubtasks,
    });
    expect((await agent.run(other)).outcome).toBe("error");
  });
});
