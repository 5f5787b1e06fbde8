import { spawn } from "node:child_process";
import { expect, test, type Browser } from "@playwright/test";
import { releaseListSchema, type SandboxRelease } from "@/lib/connectors/sandbox/contract";
import { demoAgent } from "@/lib/config/demo-accounts";
import { VerityClient } from "@/sdk";
import { uniqueId } from "../api/agent-api";
import { useProvider, type Provider } from "../api/provider";
import { signIn, type DemoUser } from "../pages/login-page";

/**
 * The second scenario end to end (issue 12): the demo coding agent
 * (`npm run agent -- --scenario delivery`) on the registered
 * software-delivery workflow, against the real server, the sandbox's release
 * service and a browser. The agent stops where people decide and is refused
 * when it tries to decide itself; an operator approves the plan, an engineer
 * security and an operator the deployment, each in the console; the worker
 * is SIGKILLed right after the deploy call, before it heard back, and a new
 * process — also the tool's lookup worker — settles it from the release
 * service's record: one release, never two.
 */

let provider: Provider;
test.beforeAll(async () => {
  provider = await useProvider();
});
test.afterAll(async () => provider.close());

function agentProcess(
  baseURL: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolve, reject) => {
    // node itself (not npx) so that the SIGKILL is seen as this child's end.
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/agent.ts", "--scenario", "delivery", ...args], {
      env: { ...process.env, VERITY_URL: baseURL, VERITY_SANDBOX_URL: provider.url, VERITY_FAULT_KILL_AT: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ code, signal, out }));
  });
}

async function releasesOfTask(taskId: string): Promise<SandboxRelease[]> {
  const res = await fetch(`${provider.url}/v1/releases`);
  return releaseListSchema.parse(await res.json()).data.filter((r) => r.metadata.task_id === taskId);
}

/** A person approves `gate` on the task's page, in their own browser session. */
async function approve(browser: Browser, user: DemoUser, taskId: string, gate: string, reason: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, user, `/tasks/${encodeURIComponent(taskId)}`);
  const card = page.getByRole("region", { name: "Approvals" });
  const form = card.getByRole("form", { name: `Approve ${gate}` });
  await form.getByLabel(new RegExp(`Reason for approving ${gate}`)).fill(reason);
  await form.getByRole("button", { name: `Approve ${gate}` }).click();
  // This gate's own line: the card as a whole may already name this person for another gate (the operator approves two).
  const line = card.getByRole("listitem").filter({ has: page.locator("strong", { hasText: new RegExp(`^${gate}$`) }) });
  await expect(line).toContainText(`approved by spiffe://verity.local/user/${user}`, { timeout: 60_000 });
  await context.close();
}

test("the coding agent stops for people, is refused deciding for them, and a worker killed after the deploy call deploys once", async ({
  baseURL,
  browser,
  request,
}) => {
  test.setTimeout(240_000);
  const runId = uniqueId("e2e-delivery");
  const taskId = `delivery-${runId}-1`;
  const client = new VerityClient({ baseUrl: baseURL!, token: demoAgent.token });

  // First run: the plan is written, then the agent waits for an operator.
  const first = await agentProcess(baseURL!, ["--tasks", "1", "--run-id", runId]);
  expect(first.code, first.out).toBe(0);
  expect(first.out).toMatch(new RegExp(`${taskId}: waiting_for_people \\(planning`));
  let task = await client.getTask(taskId);
  expect(task.workflow.name).toBe("software-delivery");
  expect(task.state.artifacts.implementation_plan).toContain("checkout");

  // The agent may not approve its own plan: a 403 naming who may.
  const refused = await request.post(`/api/v1/tasks/${encodeURIComponent(taskId)}/transitions`, {
    data: { expected_version: task.version, patch: { gates: { plan_approved: true } } },
    headers: { Authorization: `Bearer ${demoAgent.token}` },
  });
  expect(refused.status()).toBe(403);
  expect(refused.headers()["content-type"]).toContain("application/problem+json");
  expect(JSON.stringify(await refused.json())).toContain("operator or admin");
  // Nor skip a stage, nor call its tool outside the release stage.
  const skipped = await request.post(`/api/v1/tasks/${encodeURIComponent(taskId)}/transitions`, {
    data: { expected_version: task.version, to: "releasing" },
    headers: { Authorization: `Bearer ${demoAgent.token}` },
  });
  expect(skipped.status()).toBe(422);
  expect(JSON.stringify(await skipped.json())).toContain("release_requires_every_stage");
  const early = await request.post(`/api/v1/tasks/${encodeURIComponent(taskId)}/executions`, {
    data: {
      tool_call_id: "early-release",
      tool: "deploy.release",
      request: { service: "checkout", version: "9.9.9", environment: "production", commit: "abcdef1" },
      expected_version: task.version,
    },
    headers: { Authorization: `Bearer ${demoAgent.token}` },
  });
  expect(early.status()).toBe(422);
  expect(JSON.stringify(await early.json())).toContain("tool_allowed_in_state");

  await approve(browser, "operator", taskId, "plan_approved", "scope and rollback agreed");

  // Second run: implemented, reviewed and tested; it waits for security and deployment approval.
  const second = await agentProcess(baseURL!, ["--resume", "--run-id", runId, "--lease-wait-ms", "0"]);
  expect(second.code, second.out).toBe(0);
  expect(second.out).toMatch(new RegExp(`${taskId}: waiting_for_people \\(testing`));
  await approve(browser, "engineer", taskId, "security_approved", "no new input surface");
  await approve(browser, "operator", taskId, "deployment_approved", "inside the deploy window");

  // Third run: SIGKILLed right after the deploy call, before its outcome was recorded.
  const killed = await agentProcess(baseURL!, ["--resume", "--run-id", runId, "--lease-ttl", "2"], {
    VERITY_FAULT_KILL_AT: "after_call",
  });
  expect(killed.signal, killed.out).toBe("SIGKILL");
  expect(await releasesOfTask(taskId)).toHaveLength(1);
  const [sent] = await client.listExecutions(taskId);
  expect(sent).toMatchObject({ tool: "deploy.release", status: "SENT" });

  // A new process resumes: the outcome is unknown until its lookup worker answers from the release service.
  const resumed = await agentProcess(baseURL!, ["--resume", "--run-id", runId, "--verbose"]);
  expect(resumed.code, resumed.out).toBe(0);
  expect(resumed.out).toMatch(new RegExp(`${taskId}: completed \\(complete`));
  expect(resumed.out).toMatch(/lookup \S+ \(\S+\): found/);
  expect(await releasesOfTask(taskId)).toHaveLength(1);
  const [settled] = await client.listExecutions(taskId);
  expect(settled).toMatchObject({ status: "RECONCILED_SUCCEEDED", attempt: 1 });
  task = await client.getTask(taskId);
  expect(task.status).toBe("complete");

  // What the people see: the task complete, each approval by its person.
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, "auditor", `/tasks/${encodeURIComponent(taskId)}`);
  await expect(page.getByRole("main")).toContainText("complete");
  await expect(page.getByRole("region", { name: "Approvals" })).toContainText("spiffe://verity.local/user/engineer");
  await context.close();
});

test("the first start's demo released the change every person approved, and left the others waiting for people", async ({
  baseURL,
}) => {
  const client = new VerityClient({ baseUrl: baseURL!, token: demoAgent.token });
  const statuses = Object.fromEntries(
    await Promise.all(
      [1, 2, 3].map(async (n) => [n, (await client.getTask(`delivery-demo-delivery-${n}`)).status] as const),
    ),
  );
  expect(statuses[1]).toBe("planning");
  expect(statuses[2]).toBe("testing");
  // The demo runs may still be going when this runs: the approved change is releasing or released, never twice.
  expect(["testing", "releasing", "complete"]).toContain(statuses[3]);
  expect((await releasesOfTask("delivery-demo-delivery-3")).length).toBeLessThanOrEqual(1);
});
