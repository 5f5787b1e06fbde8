import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { refundListSchema } from "@/lib/connectors/sandbox/contract";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";
import { agent, connectorsFor } from "@/tests/helpers/effects";
import { serveEngineApi } from "@/tests/helpers/engine-api-server";
import { openTestPglite } from "@/tests/helpers/pglite";
import { runAiSdkRefundAgent } from "@/examples/ai-sdk-refund-agent/agent";
import { runLangChainRefundAgent } from "@/examples/langchain-refund-agent/agent";
import { runLangGraphRefundAgent } from "@/examples/langgraph-refund-agent/agent";
import { MemorySaver } from "@langchain/langgraph";
import { runOpenAiAgentsRefundAgent } from "@/examples/openai-agents-refund-agent/agent";
import type { ExampleOptions, ExampleReport } from "@/examples/shared/refund-agent";

/**
 * The examples under examples/ as a person runs them against `npm start`,
 * here against the engine's routes on a test database and the real sandbox:
 * a refund that completes its task, the same order again (the receipt,
 * nothing sent), and a lost answer (the task left RECONCILING).
 */
let db: Db;
let closeDb: () => Promise<void>;
let sandbox: Sandbox;
let api: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  ({ db, close: closeDb } = await openTestPglite());
  sandbox = await startSandbox({ port: 0 });
  api = await serveEngineApi(db, agent, { deps: connectorsFor(sandbox.url) });
});
afterAll(async () => {
  await api.close();
  await sandbox.close();
  await closeDb();
});

const examples: Array<[string, (options: ExampleOptions) => Promise<ExampleReport>]> = [
  ["ai-sdk", runAiSdkRefundAgent],
  ["langchain", runLangChainRefundAgent],
  ["openai-agents", runOpenAiAgentsRefundAgent],
  // This harness serves the ledger's routes, not /api/v1/graph: the graph keeps its thread in memory here.
  ["langgraph", (options) => runLangGraphRefundAgent(options, new MemorySaver())],
];

async function refundsFor(taskId: string): Promise<number> {
  const res = await fetch(`${sandbox.url}/v1/refunds`);
  return refundListSchema.parse(await res.json()).data.filter((r) => r.metadata.task_id === taskId).length;
}

describe.each(examples)("examples/%s-refund-agent", (name, runExample) => {
  const options = (orderId: string, faults: string[] = []): ExampleOptions => ({
    verityUrl: api.url,
    token: "unused",
    sandboxUrl: sandbox.url,
    orderId,
    faults,
  });

  it("refunds once and completes the task; the same order again gets the receipt", async () => {
    const first = await runExample(options(`${name}-1`));
    expect(first).toMatchObject({ taskStatus: "COMPLETED", result: { status: "succeeded", replayed: false } });
    expect(first.finalText).toBe("The refund is done.");
    const again = await runExample(options(`${name}-1`));
    expect(again).toMatchObject({ taskStatus: "COMPLETED", result: { status: "succeeded", replayed: true } });
    expect(await refundsFor(first.taskId)).toBe(1);
  });

  it("a lost answer leaves the task reconciling, not retried", async () => {
    const lost = await runExample(options(`${name}-2`, ["drop_response"]));
    expect(lost).toMatchObject({ taskStatus: "RECONCILING", result: { status: "waiting_for_reconciliation" } });
    expect(lost.finalText).toContain("I will not retry it");
    expect(await refundsFor(lost.taskId)).toBe(1);
  });
});
