import { expect, test } from "@playwright/test";
import { planDemoRuns } from "@/programs/demo/plan";
import { demoAgent } from "@/lib/config/demo-accounts";
import { VerityClient, type Execution } from "@/sdk";
import { refundsOfTask, useProvider, type Provider } from "../api/provider";
import { signIn } from "../pages/login-page";
import { ReviewQueuePage } from "../pages/reviews-page";

/**
 * The demo data of a fresh `npm start` comes from real runs of the demo
 * refund agent (programs/demo/, started by scripts/start.ts once the server
 * answers): this server's own demo, read back through the API, the provider
 * and the console like an operator would, never from the database.
 */
const runs = planDemoRuns();
const taskOf = (runId: string, n = 1) => runs.find((r) => r.runId === runId)!.taskIds[n - 1]!;

let provider: Provider;
test.beforeAll(async () => {
  provider = await useProvider();
});
test.afterAll(async () => provider.close());

// The demo starts when the server answers, beside the other specs: its
// reconciliations and the provider's 30 s in-flight refunds take a while.
test.setTimeout(300_000);

test("a fresh start's demo comes from real agent runs: every task ends as planned, reconciled, resumed after SIGKILL, frozen for four eyes", async ({
  baseURL,
  page,
}) => {
  const client = new VerityClient({ baseUrl: baseURL!, token: demoAgent.token });
  const status = async (taskId: string) => (await client.getTask(taskId).catch(() => undefined))?.status ?? "missing";
  for (const run of runs) {
    for (const [i, planned] of run.tasks.entries()) {
      const taskId = run.taskIds[i]!;
      await expect
        .poll(() => status(taskId), { timeout: 240_000, intervals: [2_000], message: `${taskId} (${run.shows})` })
        .toBe(planned.ends);
    }
  }

  const refundOf = async (taskId: string): Promise<Execution> =>
    (await client.listExecutions(taskId)).find((e) => e.tool_call_id === "refund")!;

  // A dropped answer, the webhook lost: only the reconciler's lookup could settle it.
  const dropped = await refundOf(taskOf("demo-lost"));
  expect(dropped).toMatchObject({ status: "RECONCILED_SUCCEEDED", attempt: 1 });
  expect(await refundsOfTask(provider.url, taskOf("demo-lost"))).toHaveLength(1);

  // Killed right after the refund call: the worker that sent it never reported. Either
  // the new process found it SENT and recorded it unknown, or (on a loaded machine,
  // where starting that process takes longer) the reconciler reached the SENT first,
  // its worker presumed dead after 30 s; both end with the reconciler finding the refund.
  const killedTask = taskOf("demo-killed");
  expect((await client.getTask(killedTask)).status).toBe("COMPLETED");
  const killed = await client.getExecution((await refundOf(killedTask)).id);
  expect(killed).toMatchObject({ status: "RECONCILED_SUCCEEDED", attempt: 1 });
  const history = killed.events.map((e) => [e.to_status, e.actor, e.reason]);
  expect(history.slice(0, 2)).toEqual([
    ["INTENT_RECORDED", demoAgent.identity, expect.any(String)],
    ["SENT", demoAgent.identity, expect.any(String)],
  ]);
  expect(history.slice(2, -1)).toEqual(
    history.length === 4
      ? [
          [
            "OUTCOME_UNKNOWN",
            demoAgent.identity,
            expect.stringContaining("the worker that sent this request stopped before recording its outcome"),
          ],
        ]
      : [],
  );
  expect(history.at(-1)).toEqual([
    "RECONCILED_SUCCEEDED",
    "spiffe://verity.local/system/reconciler",
    expect.stringContaining("the provider has re_"),
  ]);
  expect(await refundsOfTask(provider.url, killedTask)).toHaveLength(1);

  // Refused with a 503 (nothing stored), retried under the same key, then applied once.
  const retried = await refundOf(taskOf("demo-refused", 1));
  expect(retried).toMatchObject({ status: "SUCCEEDED", attempt: 2 });
  expect((await refundsOfTask(provider.url, taskOf("demo-refused", 1))).map((r) => r.idempotency_key)).toEqual([
    retried.idempotency_key,
  ]);

  // The frozen refunds wait in the operators' queue; the one above the threshold needs two of them.
  await signIn(page, "operator", "/reviews");
  const queue = new ReviewQueuePage(page);
  const large = queue.row(taskOf("demo-frozen"));
  await expect(large).toContainText("$750.00");
  await expect(large).toContainText("0 of 2 approvals: needs 2 different operators");
  await expect(large).toContainText(`vrt:${taskOf("demo-frozen")}:refund`);
  await expect(queue.row(taskOf("demo-late"))).toContainText("0 of 1 approval: needs one operator");
  expect(await refundsOfTask(provider.url, taskOf("demo-frozen"))).toHaveLength(0);
});
