import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { recordInstruction } from "@/lib/stores/instructions";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { getReviewOrThrow } from "@/lib/use-cases/reviews/get-review";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";
import { VerityClient, type ToolCallContext } from "@/sdk";
import type { DurableToolResult, VerityRun } from "@/sdk/frameworks/durable-tool";
import { afterTimeout, agent, alice, connectorsFor, runningTask } from "@/tests/helpers/effects";
import { serveEngineApi } from "@/tests/helpers/engine-api-server";
import { openTestPglite } from "@/tests/helpers/pglite";
import { refundListSchema } from "@/lib/connectors/sandbox/contract";
import { sandboxRefundTool, type AgentRun } from "./refund-tool";
import { runRefundAgent, type Framework } from "./run-agent";

export interface FrameworkEnvironment {
  readonly db: Db;
  readonly sandboxUrl: string;
  readonly apiUrl: string;
  /** The run of `taskId` through a VerityClient on the engine's HTTP routes. */
  runOf(taskId: string): VerityRun;
  /** The provider's refunds made for this task (their metadata names it). */
  refundsAtProvider(taskId: string): Promise<number>;
}

/**
 * This file's own PGlite database, the real sandbox provider, and the
 * engine's ledger routes over HTTP (tests/helpers/engine-api-server.ts), set
 * up once for the file.
 */
export function useFrameworkEnvironment(): FrameworkEnvironment {
  let db: Db | undefined;
  let closeDb: () => Promise<void> = async () => {};
  let sandbox: Sandbox | undefined;
  let api: { url: string; close: () => Promise<void> } | undefined;
  beforeAll(async () => {
    ({ db, close: closeDb } = await openTestPglite());
    sandbox = await startSandbox({ port: 0 });
    // The engine confirms a reported refund with the same provider, without the faults of the agent's own calls.
    api = await serveEngineApi(db, agent, { deps: connectorsFor(sandbox.url) });
  });
  afterAll(async () => {
    await api?.close();
    await sandbox?.close();
    await closeDb();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the framework environment is not set up yet (beforeAll)");
    return value;
  };
  return {
    get db() {
      return ready(db);
    },
    get sandboxUrl() {
      return ready(sandbox).url;
    },
    get apiUrl() {
      return ready(api).url;
    },
    runOf: (taskId) => ({
      verity: new VerityClient({ baseUrl: ready(api).url, token: "unused", retries: 0 }),
      taskId,
    }),
    refundsAtProvider: async (taskId) => {
      const res = await fetch(`${ready(sandbox).url}/v1/refunds`);
      return refundListSchema.parse(await res.json()).data.filter((r) => r.metadata.task_id === taskId).length;
    },
  };
}

/**
 * The durable-tool cases every framework adapter must pass, against the
 * real engine and the real sandbox provider; only the model is scripted.
 */
export function describeDurableRefunds(framework: Framework, env: FrameworkEnvironment): void {
  const { runOf, refundsAtProvider } = env;

  async function agentRun(
    taskId: string,
    callId: string,
    options: { faults?: string[]; approval?: string } = {},
  ): Promise<AgentRun & { calls: ToolCallContext[] }> {
    const calls: ToolCallContext[] = [];
    const tool = sandboxRefundTool(env.sandboxUrl, { ...options, onCall: (ctx) => calls.push(ctx) });
    return { ...(await runRefundAgent(framework, runOf(taskId), tool, callId)), calls };
  }

  async function ledgerOf(taskId: string) {
    const [task, executions] = await Promise.all([
      env.db.task.findFirstOrThrow({ where: { id: taskId } }),
      env.db.execution.findMany({ where: { taskId } }),
    ]);
    return { taskStatus: task.status, executions: executions.map((e) => ({ id: e.id, status: e.status })) };
  }

  function only(results: DurableToolResult[]): DurableToolResult {
    expect(results).toHaveLength(1);
    return results[0] as DurableToolResult;
  }

  describe(`${framework}: durable refund tool`, () => {
    it("one call makes exactly one refund; a replay of the same tool call id gets the receipt and refunds nothing", async () => {
      const task = await runningTask(env.db);
      const first = await agentRun(task.id, "call_refund_1");
      const made = only(first.results);
      expect(made).toMatchObject({ status: "succeeded", replayed: false, executionStatus: "SUCCEEDED" });
      expect(made.toolCallId).toBe("refund:call_refund_1");
      expect(made.idempotencyKey).toBe(`vrt:${task.id}:refund:call_refund_1`);
      expect(first.calls.map((c) => c.idempotencyKey)).toEqual([made.idempotencyKey]);
      expect(first.finalText).toContain("Refund done");
      expect(await refundsAtProvider(task.id)).toBe(1);

      const replay = await agentRun(task.id, "call_refund_1");
      expect(only(replay.results)).toMatchObject({
        status: "succeeded",
        replayed: true,
        executionId: made.executionId,
        result: made.status === "succeeded" ? made.result : "not a success",
      });
      expect(replay.calls).toEqual([]);
      expect(await refundsAtProvider(task.id)).toBe(1);
      expect((await ledgerOf(task.id)).executions).toHaveLength(1);
    });

    it("a process killed right after the refund call, then resumed: exactly one refund, and no retry before reconciliation", async () => {
      const task = await runningTask(env.db);
      const killed = await workerProcess(framework, {
        VERITY_URL: env.apiUrl,
        SANDBOX_URL: env.sandboxUrl,
        TASK_ID: task.id,
        CALL_ID: "call_refund_k",
        VERITY_FAULT_KILL_AT: "after_call",
      });
      expect(killed.signal).toBe("SIGKILL");
      expect(await refundsAtProvider(task.id)).toBe(1);
      const [execution] = (await ledgerOf(task.id)).executions;
      // The refund left and was made; the outcome was never recorded.
      expect(execution?.status).toBe("SENT");

      const resumed = await workerProcess(framework, {
        VERITY_URL: env.apiUrl,
        SANDBOX_URL: env.sandboxUrl,
        TASK_ID: task.id,
        CALL_ID: "call_refund_k",
      });
      expect(resumed.signal).toBeNull();
      const out = JSON.parse(resumed.stdout.trim().split("\n").at(-1) ?? "{}") as AgentRun & { calls: number };
      expect(only(out.results)).toMatchObject({
        status: "waiting_for_reconciliation",
        executionId: execution?.id,
        executionStatus: "SENT",
      });
      expect(out.calls).toBe(0);
      expect(out.finalText).toContain("will not retry");
      expect(await refundsAtProvider(task.id)).toBe(1);

      // The server's reconciler finds the refund at the provider; the next replay reads the receipt.
      const settled = await reconcileExecution(env.db, execution?.id ?? "", connectorsFor(env.sandboxUrl), {
        now: afterTimeout(),
      });
      expect(settled.execution.status).toBe("RECONCILED_SUCCEEDED");
      const after = await agentRun(task.id, "call_refund_k");
      expect(only(after.results)).toMatchObject({ status: "succeeded", replayed: true });
      expect(after.calls).toEqual([]);
      expect(await refundsAtProvider(task.id)).toBe(1);
    });

    it("a dropped answer: the run reports waiting for reconciliation, does not retry, and the ledger says OUTCOME_UNKNOWN", async () => {
      const task = await runningTask(env.db);
      // drop_response: the provider stores the refund, then destroys the socket.
      const lost = await agentRun(task.id, "call_refund_d", { faults: ["drop_response"] });
      const waiting = only(lost.results);
      expect(waiting).toMatchObject({ status: "waiting_for_reconciliation", executionStatus: "OUTCOME_UNKNOWN" });
      expect(waiting.message).toContain("Do not call it again");
      expect(lost.calls).toHaveLength(1);
      expect(lost.finalText).toContain("will not retry");
      expect(await ledgerOf(task.id)).toEqual({
        taskStatus: "RECONCILING",
        executions: [{ id: waiting.executionId, status: "OUTCOME_UNKNOWN" }],
      });
      expect(await refundsAtProvider(task.id)).toBe(1);

      // The same call replayed (a rerun of the run) still does not send.
      const again = await agentRun(task.id, "call_refund_d");
      expect(only(again.results)).toMatchObject({ status: "waiting_for_reconciliation" });
      expect(again.calls).toEqual([]);
      // A model that asks again under a new tool call id is refused too: the task waits for reconciliation.
      const retried = await agentRun(task.id, "call_refund_d2");
      expect(only(retried.results)).toMatchObject({ status: "refused" });
      expect(retried.calls).toEqual([]);
      expect(await refundsAtProvider(task.id)).toBe(1);

      const settled = await reconcileExecution(env.db, waiting.executionId ?? "", connectorsFor(env.sandboxUrl));
      expect(settled.execution.status).toBe("RECONCILED_SUCCEEDED");
      const after = await agentRun(task.id, "call_refund_d");
      expect(only(after.results)).toMatchObject({ status: "succeeded", replayed: true });
      expect(after.calls).toEqual([]);
      expect(await refundsAtProvider(task.id)).toBe(1);
    });

    it("a call that needs approval waits in the review queue; approved, the same call gets the receipt; rejected, it is never sent", async () => {
      const approval = "refund of a disputed order";
      const decide = async (reviewId: string, decision: "approve_execute" | "reject") => {
        const review = await getReviewOrThrow(env.db, reviewId);
        return decideReview(
          env.db,
          reviewId,
          { expected_version: review.version, decision, reason: `${decision}: checked with the customer` },
          alice,
          connectorsFor(env.sandboxUrl),
        );
      };

      const task = await runningTask(env.db);
      const asked = await agentRun(task.id, "call_refund_a", { approval });
      const waiting = only(asked.results);
      expect(waiting).toMatchObject({ status: "awaiting_approval", executionStatus: "NEEDS_HUMAN" });
      expect(asked.finalText).toContain("waits for a person's approval");
      expect(asked.calls).toEqual([]);
      expect(await ledgerOf(task.id)).toMatchObject({ taskStatus: "WAITING_FOR_HUMAN" });
      expect(await refundsAtProvider(task.id)).toBe(0);
      if (waiting.status !== "awaiting_approval") return;
      // A person approves in the review queue: Verity sends it once, under the call's key.
      expect(await decide(waiting.reviewId, "approve_execute")).toMatchObject({ executed: true });
      const resumed = await agentRun(task.id, "call_refund_a", { approval });
      expect(only(resumed.results)).toMatchObject({ status: "succeeded", replayed: true });
      expect(resumed.calls).toEqual([]);
      expect(await refundsAtProvider(task.id)).toBe(1);

      const other = await runningTask(env.db);
      const refused = only((await agentRun(other.id, "call_refund_r", { approval })).results);
      if (refused.status !== "awaiting_approval") throw new Error(`expected awaiting_approval, got ${refused.status}`);
      await decide(refused.reviewId, "reject");
      const after = await agentRun(other.id, "call_refund_r", { approval });
      expect(only(after.results)).toMatchObject({ status: "rejected" });
      expect(after.finalText).toContain("No refund");
      expect(after.calls).toEqual([]);
      expect(await refundsAtProvider(other.id)).toBe(0);
    });

    it("the instruction guard's refusal reaches the model in words, and nothing is sent", async () => {
      const task = await runningTask(env.db);
      await recordInstruction(
        env.db,
        task.id,
        {
          expected_seq: 0,
          instruction_id: `stop-${task.id}`,
          topic: "refund",
          directive: "forbid",
          text: "Do not refund this customer: chargeback under review.",
          source: "operator",
        },
        alice,
      );
      const stopped = await agentRun(task.id, "call_refund_b");
      const blocked = only(stopped.results);
      expect(blocked).toMatchObject({ status: "blocked", executionStatus: "NEEDS_HUMAN" });
      expect(blocked.message).toMatch(/frozen for review/);
      expect(stopped.finalText).toContain("No refund");
      expect(stopped.calls).toEqual([]);
      expect(await refundsAtProvider(task.id)).toBe(0);
    });
  });
}

const workerScript = path.join(import.meta.dirname, "agent-worker.ts");

/** Runs tests/frameworks/agent-worker.ts to its end (or its SIGKILL). */
function workerProcess(
  framework: Framework,
  env: Record<string, string>,
): Promise<{ signal: NodeJS.Signals | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", workerScript], {
      cwd: path.resolve(import.meta.dirname, "..", ".."),
      env: { ...process.env, FRAMEWORK: framework, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code !== 0 && signal === null) reject(new Error(`agent-worker exited ${code}: ${stderr}`));
      else resolve({ signal, stdout });
    });
  });
}
