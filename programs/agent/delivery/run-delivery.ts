import { sleep } from "@/lib/core/sleep";
import type { VerityClient } from "@/sdk";
import { runLookupWorker } from "@/sdk/lookup-worker";
import { changesOf, type DeliveryAgent, type DeliveryReport } from "@/programs/agent/delivery/delivery-agent";
import { RELEASE_TOOL, ROLLBACK_TOOL, type DeliveryOutcome } from "@/programs/agent/delivery/plan";
import { lookUpRelease, lookUpRollback, type ReleaseServiceOptions } from "@/programs/agent/delivery/release-service";

export interface DeliveryRun {
  client: VerityClient;
  releaseService: ReleaseServiceOptions;
  tasks: number;
  runId: string;
  resume: boolean;
  resumeRunId?: string;
  /** How long to keep answering lookups while a release's outcome is settled. */
  settleWaitMs: number;
  log: (line: string) => void;
}

const settled = new Set([
  "SUCCEEDED",
  "RECONCILED_SUCCEEDED",
  "FAILED",
  "RECONCILED_FAILED",
  "CANCELLED",
  "NEEDS_HUMAN",
]);

/**
 * One run of the coding agent: its changes (or, with --resume, its
 * unfinished tasks) driven as far as people let them, while this process
 * also serves as a worker of deploy.release and deploy.rollback, answering the server's lookups
 * from the release service. A release whose outcome is unknown (the agent
 * that sent it was killed before it heard back) is settled by exactly that:
 * the server asks, a worker looks the key up and answers with the release
 * it finds, and the task moves on from the settled execution — the deploy
 * is never sent twice.
 */
export async function runDeliveryAgent(
  agent: DeliveryAgent,
  run: DeliveryRun,
  onReport: (r: DeliveryReport) => void,
): Promise<{ reports: DeliveryReport[]; totals: Record<DeliveryOutcome, number> }> {
  const stop = new AbortController();
  const workerOf = (tool: string, lookUp: typeof lookUpRelease | typeof lookUpRollback) =>
    runLookupWorker({
      client: run.client,
      tool,
      signal: stop.signal,
      pollIntervalMs: 500,
      lookup: async (question) => {
        const found = await lookUp(run.releaseService, question.idempotency_key);
        run.log(`  lookup ${question.id} (${question.idempotency_key}): ${found.result}`);
        if (found.result === "found")
          return { result: "found", record: found.record, evidence: { record_id: found.record.id } };
        return found;
      },
      onError: (error) => run.log(`  lookup worker: ${error instanceof Error ? error.message : String(error)}`),
    });
  // A worker of each tool this agent sends: the release, and its compensation.
  const workers = [workerOf(RELEASE_TOOL, lookUpRelease), workerOf(ROLLBACK_TOOL, lookUpRollback)];
  const reports: DeliveryReport[] = [];
  try {
    const jobs = run.resume
      ? (await agent.findResumable(run.resumeRunId)).map(
          ({ taskId, change }) =>
            () =>
              agent.drive(taskId, change),
        )
      : changesOf(run.runId, run.tasks).map((change) => () => agent.run(change));
    for (const job of jobs) {
      let report = await job();
      if (report.outcome === "reconciling") {
        await waitForRelease(run, report.taskId);
        const change = (await agent.findResumable()).find((r) => r.taskId === report.taskId);
        if (change) report = await agent.drive(report.taskId, change.change);
      }
      reports.push(report);
      onReport(report);
    }
  } finally {
    stop.abort();
    await Promise.all(workers);
  }
  const totals = { completed: 0, waiting_for_people: 0, reconciling: 0, failed: 0, in_flight: 0, error: 0 };
  for (const r of reports) totals[r.outcome]++;
  return { reports, totals };
}

/** Until no call of the task (its release, its rollback) is still being settled, or settleWaitMs: the lookup workers above do the settling. */
async function waitForRelease(run: DeliveryRun, taskId: string): Promise<void> {
  const until = Date.now() + run.settleWaitMs;
  while (Date.now() < until) {
    const executions = await run.client.listExecutions(taskId);
    if (executions.every((e) => settled.has(e.status) || e.status === "INTENT_RECORDED")) return;
    await sleep(500);
  }
}
