import { spawn } from "node:child_process";
import { expect, test } from "@playwright/test";
import { RefundAgent, runRefundAgent, type RefundAgentOptions, type TaskReport } from "@/programs/agent/refund-agent";
import { demoAgent } from "@/lib/config/demo-accounts";
import { VerityClient, type Task } from "@/sdk";
import { uniqueId } from "./agent-api";
import { refundsOfTask, startWebhookSink, useProvider, type Provider, type WebhookSink } from "./provider";

/**
 * The demo refund agent against the real server and sandbox: the happy
 * path, faults that leave the outcome unknown or refused, and the chaos
 * case the audit calls the most important test — the process killed right
 * after the irreversible call, before its outcome is persisted — resumed by
 * a new process without a second refund.
 */

let provider: Provider;
let sink: WebhookSink;
test.beforeAll(async () => {
  provider = await useProvider();
  sink = await startWebhookSink();
});
test.afterAll(async () => Promise.all([provider.close(), sink.close()]));

function agent(
  baseURL: string | undefined,
  options: Partial<RefundAgentOptions> = {},
): { agent: RefundAgent; client: VerityClient } {
  const client = new VerityClient({ baseUrl: baseURL!, token: demoAgent.token, retryBaseDelayMs: 20 });
  return {
    client,
    agent: new RefundAgent({
      client,
      sandboxUrl: provider.url,
      identity: demoAgent.identity,
      callTimeoutMs: 1_500,
      leaseTtlSeconds: 30,
      faults: [],
      faultRate: 0,
      seed: 42,
      log: () => undefined,
      ...options,
    }),
  };
}

async function run(a: RefundAgent, runId: string, tasks: number): Promise<TaskReport[]> {
  return (
    await runRefundAgent(
      a,
      { tasks, amountCents: 1999, currency: "usd", runId, resume: false, concurrency: 2 },
      () => undefined,
    )
  ).reports;
}

test("each refund task is driven to COMPLETED: one refund, the customer notified, every subtask done", async ({
  baseURL,
}) => {
  const { agent: a, client } = agent(baseURL);
  const runId = uniqueId("ok");
  const reports = await run(a, runId, 2);
  expect(reports.map((r) => r.outcome)).toEqual(["completed", "completed"]);
  for (const r of reports) {
    expect(r.refund).toMatchObject({ status: "SUCCEEDED", attempts: 1 });
    expect(r.note).toMatchObject({ status: "SUCCEEDED" });
    const task = await client.getTask(r.taskId);
    expect(task.status).toBe("COMPLETED");
    expect(task.state.subtasks.map((s) => [s.id, s.status])).toEqual([
      ["lookup-order", "COMPLETED"],
      ["issue-refund", "COMPLETED"],
      ["notify-customer", "COMPLETED"],
    ]);
    expect(task.state.completed_agents).toEqual([demoAgent.identity]);
    expect(await refundsOfTask(provider.url, r.taskId)).toHaveLength(1);
    expect((await client.getLease(r.taskId))?.active).toBe(false);
  }
  // Running the same orders again finds them done: no new effects.
  const again = await run(a, runId, 2);
  expect(again.map((r) => r.outcome)).toEqual(["completed", "completed"]);
  for (const r of again) expect(await refundsOfTask(provider.url, r.taskId)).toHaveLength(1);
});

test("two processes of one agent identity on the same run: every task completed by exactly one of them, one refund each", async ({
  baseURL,
}) => {
  // Two clients are two worker processes to the server: the same token and identity, their own leases.
  const x = agent(baseURL);
  const y = agent(baseURL);
  const runId = uniqueId("twins");
  const [xs, ys] = await Promise.all([run(x.agent, runId, 3), run(y.agent, runId, 3)]);
  const byTask = new Map<string, string[]>();
  for (const r of [...xs, ...ys]) byTask.set(r.taskId, [...(byTask.get(r.taskId) ?? []), r.outcome]);
  expect(byTask.size).toBe(3);
  for (const [taskId, outcomes] of byTask) {
    // One of them drove it; the other found it leased (in_flight) or already done; neither erred.
    expect(
      outcomes.every((o) => o === "completed" || o === "in_flight"),
      `${taskId}: ${outcomes.join(", ")}`,
    ).toBe(true);
    expect((await x.client.getTask(taskId)).status).toBe("COMPLETED");
    expect(await refundsOfTask(provider.url, taskId)).toHaveLength(1);
    const refunds = (await x.client.listExecutions(taskId)).filter((e) => e.tool === "payments.refund");
    expect(refunds.map((e) => [e.status, e.attempt])).toEqual([["SUCCEEDED", 1]]);
  }
});

test("a dropped answer leaves the refund UNKNOWN: the task is left RECONCILING and reported, not retried", async ({
  baseURL,
}) => {
  // The provider's webhook goes elsewhere, so only the server's reconciler can settle it.
  const { agent: a, client } = agent(baseURL, { faults: ["drop_response"], faultRate: 1, webhookUrl: sink.url });
  const [r] = await run(a, uniqueId("drop"), 1);
  expect(r).toMatchObject({ outcome: "reconciling", refund: { attempts: 1 } });
  expect(r!.faults[0]).toBe("drop_response");
  // The server's reconciler runs every second and may settle the refund from
  // the provider's record before the agent reports (then the agent goes on to
  // the note, whose answer is dropped too). Either way: one attempt, no retry.
  expect(["OUTCOME_UNKNOWN", "RECONCILED_SUCCEEDED"]).toContain(r!.refund?.status);
  const task = await client.getTask(r!.taskId);
  // The server's reconciler may already have taken it further; never back to a retry by the agent.
  expect(["RECONCILING", "VALIDATING", "WAITING_FOR_HUMAN"]).toContain(task.status);
  expect(await refundsOfTask(provider.url, r!.taskId)).toHaveLength(1);
});

test("a refusal that may pass on retry is retried once with the same key, then goes to a review, not to FAILED", async ({
  baseURL,
}) => {
  const { agent: a, client } = agent(baseURL, { faults: ["error_before_commit"], faultRate: 1 });
  const [r] = await run(a, uniqueId("refused"), 1);
  expect(r).toMatchObject({
    outcome: "review",
    status: "WAITING_FOR_HUMAN",
    refund: { status: "NEEDS_HUMAN", attempts: 2 },
    faults: ["error_before_commit", "error_before_commit"],
  });
  const task: Task = await client.getTask(r!.taskId);
  expect(task.state.subtasks.find((s) => s.id === "issue-refund")?.status).not.toBe("FAILED");
  const [refund] = await client.listExecutions(r!.taskId);
  expect((await client.getExecution(refund!.id)).events.at(-1)).toMatchObject({
    from_status: "FAILED",
    to_status: "NEEDS_HUMAN",
    reason: expect.stringContaining("attempt 2 was the last of 2"),
  });
  expect(await refundsOfTask(provider.url, r!.taskId)).toHaveLength(0);
});

test("dropped answers settled by the provider's webhook and the server's reconciler: the resumed agent completes, without a second refund", async ({
  baseURL,
}) => {
  test.setTimeout(90_000);
  // Every call's answer is lost (the refund's and the customer note's).
  const { agent: chaotic, client } = agent(baseURL, { faults: ["drop_response"], faultRate: 1 });
  const [r] = await run(chaotic, uniqueId("drop-hook"), 1);
  // Left for the reconciler, or (when the webhook and the reconciler were
  // quicker than the agent's next read) already settled: either way every
  // answer was dropped on the way back, so the agent itself never learnt an
  // outcome, and it never sent a second attempt.
  expect(["reconciling", "completed"]).toContain(r!.outcome);
  expect(r!.faults).toContain("drop_response");
  const taskId = r!.taskId;
  expect((await client.listExecutions(taskId)).map((e) => [e.tool_call_id, e.attempt])).not.toContainEqual([
    "refund",
    2,
  ]);
  // The refund's webhook reached the server: settled by the provider's own record.
  await expect
    .poll(async () => (await client.listExecutions(taskId)).find((e) => e.tool_call_id === "refund")?.status, {
      timeout: 15_000,
    })
    .toMatch(/SUCCEEDED$/);

  // A clean agent resumes whenever there is work; the note's unknown outcome is the reconciler's to settle.
  const { agent: clean } = agent(baseURL);
  await expect
    .poll(async () => (await clean.resume(taskId)).outcome, { timeout: 60_000, intervals: [1_000] })
    .toBe("completed");
  expect((await client.getTask(taskId)).status).toBe("COMPLETED");
  const executions = await client.listExecutions(taskId);
  expect(executions.map((e) => [e.tool_call_id, e.attempt])).toEqual([
    ["refund", 1],
    ["notify-customer", 1],
  ]);
  expect(await refundsOfTask(provider.url, taskId)).toHaveLength(1);
});

/** `npm run agent` as a separate process: returns how it ended and what it printed. */
function agentProcess(
  baseURL: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolve, reject) => {
    // node itself (not npx) so that the SIGKILL is seen as this child's end.
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/agent.ts", ...args], {
      env: { ...process.env, VERITY_URL: baseURL, VERITY_SANDBOX_URL: provider.url, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ code, signal, out }));
  });
}

for (const [point, expected] of [
  // Died after the intent, which sent the attempt with it (the SDK's default),
  // before the call: nothing reached the provider, but the ledger says SENT,
  // so the attempt is never sent again before the provider is asked. The
  // resumed agent records its outcome unknown for the reconciler, or finds
  // the reconciler has already settled it as not made and makes the refund
  // on a second attempt under the same key.
  [
    "after_intent",
    [
      { outcome: "reconciling", refund: "OUTCOME_UNKNOWN" },
      { outcome: "reconciling", refund: "SENT" },
      { outcome: "completed", refund: "SUCCEEDED" },
    ],
  ],
  // Died with the refund made and unrecorded: the provider's webhook settles
  // it (then the resumed agent completes), or the resumed agent records it
  // UNKNOWN and leaves it to the reconciler. Never sent again either way.
  [
    "after_call",
    [
      { outcome: "completed", refund: "SUCCEEDED" },
      { outcome: "reconciling", refund: "OUTCOME_UNKNOWN" },
    ],
  ],
  // Died with the outcome recorded: the receipt is used.
  ["after_outcome", [{ outcome: "completed", refund: "SUCCEEDED" }]],
] as const) {
  test(`SIGKILL at ${point}, then --resume: at most one refund, and the task continues from its last commit`, async ({
    baseURL,
  }) => {
    test.setTimeout(120_000);
    const runId = uniqueId(`kill-${point.replaceAll("_", "")}`);
    // A short lease: the resumed process waits for the dead one's lease to expire (a lease is one process's).
    const killed = await agentProcess(baseURL!, ["--tasks", "1", "--run-id", runId, "--lease-ttl", "2"], {
      VERITY_FAULT_KILL_AT: point,
    });
    expect(killed.signal, killed.out).toBe("SIGKILL");
    const taskId = `refund-${runId}-1`;
    const calledBeforeTheKill = point !== "after_intent";
    expect(await refundsOfTask(provider.url, taskId)).toHaveLength(calledBeforeTheKill ? 1 : 0);

    const resumed = await agentProcess(baseURL!, ["--resume", "--run-id", runId]);
    expect(resumed.code, resumed.out).toBe(0);
    const line = resumed.out.split("\n").find((l) => l.startsWith(taskId)) ?? "";
    expect(
      expected.some((e) => new RegExp(`^${taskId}\\s+${e.outcome}\\b.* refund ${e.refund}\\b`).test(line)),
      `${line}\n${resumed.out}`,
    ).toBe(true);
    // A second attempt only where the first never reached the provider, and then under the same key.
    if (calledBeforeTheKill) expect(line).not.toContain("attempts)");
    const completed = /^\S+\s+completed\b/.test(line);
    expect(await refundsOfTask(provider.url, taskId)).toHaveLength(calledBeforeTheKill || completed ? 1 : 0);
  });
}

test("the CLI refuses bad usage with exit status 2", async ({ baseURL }) => {
  const bad = await agentProcess(baseURL!, ["--faults", "explode"]);
  expect(bad.code).toBe(2);
  expect(bad.out).toContain('unknown fault "explode"');
});
