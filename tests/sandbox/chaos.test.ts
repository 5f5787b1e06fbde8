import { describe, expect, it } from "vitest";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import type { PaymentConnector, RefundRequest } from "@/lib/connectors/types";
import { findDuplicateRefunds } from "@/lib/connectors/sandbox/duplicate-refunds";
import { get, listRefunds, post, refundBody, sandbox } from "./helpers";

/** Global, seeded faults: what a chaos run switches on and must be able to replay. */

async function outcomesOf(base: string, keys: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const key of keys) {
    try {
      const res = await post(`${base}/v1/refunds`, refundBody(), { "Idempotency-Key": key });
      out.push(String(res.status));
    } catch {
      out.push("dropped");
    }
  }
  return out;
}

const keys = (prefix: string, n = 16) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe("global faults", () => {
  it("inject the same faults for the same seed and sequence of requests", async () => {
    const s = await sandbox();
    const config = {
      faults: ["error_before_commit", "error_after_commit", "drop_response"],
      probability: 0.6,
      seed: 1234,
    };
    expect((await post(`${s.url}/__sandbox/faults`, config)).json).toMatchObject({
      ...config,
      scope: "writes",
      draws: 0,
    });
    const first = await outcomesOf(s.url, keys("a"));
    await post(`${s.url}/__sandbox/faults`, config);
    const second = await outcomesOf(s.url, keys("b"));
    expect(second).toEqual(first);
    expect(new Set(first)).toEqual(new Set(["200", "500", "503", "dropped"]));

    await post(`${s.url}/__sandbox/faults`, { ...config, seed: 4321 });
    const other = await outcomesOf(s.url, keys("c"));
    expect(other).not.toEqual(first);
    expect((await get(`${s.url}/__sandbox/faults`)).json).toMatchObject({
      seed: 4321,
      draws: 16,
      hits: other.filter((o) => o !== "200").length,
    });
  });

  it("hit about `probability` of the requests and report a generated seed", async () => {
    const s = await sandbox({ faults: { faults: ["error_before_commit"], probability: 0.25 } });
    const state = (await get(`${s.url}/__sandbox/faults`)).json;
    expect(state.seed).toEqual(expect.any(Number));
    const outcomes = await outcomesOf(s.url, keys("a", 60));
    const failed = outcomes.filter((o) => o === "503").length;
    expect(failed).toBeGreaterThan(3);
    expect(failed).toBeLessThan(35);
    expect((await get(`${s.url}/__sandbox/faults`)).json.hits).toBe(failed);
  });

  it("leave reads alone unless the scope is all; a request header replaces them", async () => {
    const s = await sandbox();
    await post(`${s.url}/__sandbox/faults`, { faults: ["error_after_commit"], seed: 1 });
    expect((await get(`${s.url}/v1/refunds`)).status).toBe(200);
    expect(
      (await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "a", "X-Sandbox-Fault": "latency=1" }))
        .status,
    ).toBe(200);
    await post(`${s.url}/__sandbox/faults`, { faults: ["error_after_commit"], seed: 1, scope: "all" });
    expect((await get(`${s.url}/v1/refunds`)).status).toBe(500);
    expect((await get(`${s.url}/__sandbox/stats`)).status).toBe(200);
    await post(`${s.url}/__sandbox/faults`, { faults: [] });
    expect((await get(`${s.url}/v1/refunds`)).status).toBe(200);
  });

  it.each([
    [{ faults: ["boom"] }, "faults"],
    [{ faults: [], probability: 2 }, "probability"],
    [{ faults: [], extra: 1 }, "extra"],
  ])("refuse a bad configuration %j", async (body, param) => {
    const s = await sandbox();
    const res = await post(`${s.url}/__sandbox/faults`, body);
    expect(res.status).toBe(400);
    expect(res.json.error.param).toBe(param);
  });
});

/**
 * The reconciliation discipline the connector's outcomes are designed for,
 * run against every fault at once (lookups included): unknown → look up →
 * found: done; not_found: retry with the SAME key; failed and retryable:
 * retry with the same key. It must end with exactly one refund per execution.
 */
async function refundExactlyOnce(connector: PaymentConnector, request: RefundRequest): Promise<string> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const outcome = await connector.refund(request);
    if (outcome.kind === "succeeded") return outcome.refund.id;
    if (outcome.kind === "failed" && !outcome.retryable) throw new Error(`refused: ${outcome.message}`);
    if (outcome.kind === "unknown") {
      const found = await connector.lookupRefund(request.idempotencyKey);
      if (found.kind === "found") return found.refund.id;
    }
  }
  throw new Error("no definite outcome after 50 attempts");
}

describe("a chaos run", () => {
  it("ends with exactly one refund per execution when unknown outcomes are reconciled", async () => {
    const s = await sandbox();
    await post(`${s.url}/__sandbox/faults`, {
      faults: ["error_before_commit", "error_after_commit", "timeout_after_commit", "drop_response", "latency=5"],
      probability: 0.5,
      seed: 99,
      scope: "all",
    });
    const connector = new SandboxPaymentConnector({ baseUrl: s.url, timeoutMs: 150 });
    const executions = Array.from({ length: 20 }, (_, i) => `exec_${i}`);
    const ids = new Map<string, string>();
    for (const executionId of executions) {
      const request: RefundRequest = {
        idempotencyKey: `refund:${executionId}`,
        amountCents: 100,
        currency: "usd",
        chargeId: "ch_chaos",
        customerId: "cus_1",
        metadata: { executionId, taskId: "task_chaos" },
      };
      ids.set(executionId, await refundExactlyOnce(connector, request));
    }
    await post(`${s.url}/__sandbox/faults`, { faults: [] });
    const refunds = await listRefunds(s.url);
    expect(refunds).toHaveLength(executions.length);
    expect(findDuplicateRefunds(refunds)).toEqual({ byExecution: [], byIdempotencyKey: [] });
    expect(new Set(refunds.map((r) => r.id))).toEqual(new Set(ids.values()));
    const stats = (await get(`${s.url}/__sandbox/stats`)).json;
    expect(Object.keys(stats.faults_injected).sort()).toEqual([
      "drop_response",
      "error_after_commit",
      "error_before_commit",
      "latency",
      "timeout_after_commit",
    ]);
  });

  it("catches an agent that retries an unknown outcome under a fresh key", async () => {
    const s = await sandbox();
    const base = {
      amountCents: 100,
      currency: "usd",
      chargeId: "ch_1",
      customerId: "cus_1",
      metadata: { executionId: "exec_1", taskId: "task_1" },
    };
    expect(
      await new SandboxPaymentConnector({ baseUrl: s.url, faults: ["drop_response"] }).refund({
        ...base,
        idempotencyKey: "attempt-1",
      }),
    ).toMatchObject({ kind: "unknown" });
    await new SandboxPaymentConnector({ baseUrl: s.url }).refund({ ...base, idempotencyKey: "attempt-2" });
    expect(findDuplicateRefunds(await listRefunds(s.url)).byExecution).toHaveLength(1);
  });
});
