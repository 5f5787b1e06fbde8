/**
 * A refund worker process of tests/postgres/chaos.test.ts. It opens its
 * PostgreSQL pool and compiles its queries once, says "ready", and then
 * lives worker lives on request: each life is one worker's run on one task
 * from nothing but what the database holds — a new lease, the task read
 * afresh, the refund driven through the execution ledger against the
 * sandbox provider over HTTP — and SIGKILLs this whole process at the named
 * fault point (`killAt`): a real process dying at the exact step boundary,
 * the kernel's kill, no cleanup, no finally, its pool connection cut. A
 * killed process is replaced by a new one; a life that ends normally
 * leaves nothing behind in memory, so the next life in the same process is
 * a restarted worker in every way the engine can see.
 *
 * Protocol (IPC, child_process.fork): parent → {type: "run", job}; child →
 * {type: "ready"}, {type: "calling", lifeId, executionId, idempotencyKey}
 * (about to send the refund), {type: "done", lifeId, result}. `result.kind`:
 * done (completed or handed over), refused (an expected protocol refusal by
 * the engine, an AppError), bug (anything else).
 */
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { openDatabase } from "@/lib/db/client";
import { performEffect } from "@/lib/connectors/effects";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { acquireLease, releaseLease, renewLease } from "@/lib/stores/leases";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import type { Actor } from "@/lib/model/actor";
import { isAppError } from "@/lib/core/errors";

export type FaultPoint = "after_intent" | "after_sent" | "after_call" | "after_outcome";

export interface WorkerJob {
  lifeId: string;
  taskId: string;
  sandboxUrl: string;
  killAt?: FaultPoint;
  /** Per-request faults on the refund call only; lookups stay clean so reconciliation can see through them. */
  faults: string[];
  /** The SPIFFE ID this life works under: lives of one agent share it, whatever process they run in. */
  identity: string;
  leaseTtlSeconds: number;
}

export type LifeResult =
  | { kind: "done"; detail: string }
  | { kind: "refused"; code: string; detail: string }
  | { kind: "bug"; detail: string };

export type ToParent =
  | { type: "ready" }
  | { type: "calling"; lifeId: string; executionId: string; idempotencyKey: string }
  | { type: "done"; lifeId: string; result: LifeResult };
export type ToWorker = { type: "run"; job: WorkerJob };

export const refundRequest = { amount_cents: 4200, currency: "usd", charge_id: "ch_chaos", customer_id: "cus_chaos" };

const url = process.env.CHAOS_DATABASE_URL ?? "";
if (!url || !process.send) {
  console.error("chaos-refund-worker is forked by tests/postgres/chaos.test.ts");
  process.exit(2);
}
const send = (message: ToParent) => process.send?.(message);

// Two connections: the lease's renewal never queues behind the life's own statements.
const handle = openDatabase({ kind: "postgres", url }, { poolSize: 2 });
const db = handle.db;

async function live(job: WorkerJob): Promise<string> {
  const actor: Actor = { identity: job.identity, kind: "agent" };
  const deps = {
    payments: new SandboxPaymentConnector({ baseUrl: job.sandboxUrl, faults: job.faults, timeoutMs: 1_500 }),
    crm: new SandboxCrmConnector({ baseUrl: job.sandboxUrl, timeoutMs: 1_500 }),
  };
  // The engine's own line to the same provider, which confirms a reported refund; the faults are the worker's calls'.
  const provider = {
    payments: new SandboxPaymentConnector({ baseUrl: job.sandboxUrl, timeoutMs: 1_500 }),
    crm: new SandboxCrmConnector({ baseUrl: job.sandboxUrl, timeoutMs: 1_500 }),
  };
  const faultPoint = (point: FaultPoint) => {
    if (job.killAt === point) process.kill(process.pid, "SIGKILL");
  };
  const lease = await acquireLease(db, job.taskId, { ttl_seconds: job.leaseTtlSeconds }, actor);
  const fencing_token = lease.fencingToken;
  // A short lease, renewed while the life runs: a killed life's lease ends
  // within one TTL, and the test waits for exactly that before restarting.
  // A renewal refused (the lease was lost) only means this life's next
  // write is fenced, which the engine reports.
  const renewing = setInterval(
    () =>
      void renewLease(db, job.taskId, fencing_token, { ttl_seconds: job.leaseTtlSeconds }, actor).catch(
        () => undefined,
      ),
    (job.leaseTtlSeconds * 1000) / 3,
  );
  try {
    for (let round = 0; round < 6; round++) {
      const task = await getTaskOrThrow(db, job.taskId);
      switch (task.status) {
        case "COMPLETED":
          return "completed";
        case "RECONCILING":
        case "WAITING_FOR_HUMAN":
          return `handed over (${task.status})`;
        case "VALIDATING":
          await transitionTask(
            db,
            job.taskId,
            {
              expected_version: task.version,
              to: "COMPLETED",
              patch: { subtasks: [{ id: "issue-refund", status: "COMPLETED" }] },
              fencing_token,
              reason: "refund confirmed",
            },
            actor,
          );
          continue;
        case "RUNNING":
        case "WAITING_FOR_TOOL": {
          const intent = await recordIntent(
            db,
            job.taskId,
            {
              tool_call_id: "refund",
              tool: "payments.refund",
              request: refundRequest,
              expected_version: task.version,
              fencing_token,
            },
            actor,
          );
          if (intent.kind === "receipt") {
            // The effect already happened (recorded by an earlier life, or reconciled): never call again.
            continue;
          }
          if (intent.kind !== "proceed") return `intent ${intent.kind}`;
          faultPoint("after_intent");
          const execution = intent.execution;
          await markSent(db, execution.id, { attempt_id: execution.attemptId }, actor);
          faultPoint("after_sent");
          send({
            type: "calling",
            lifeId: job.lifeId,
            executionId: execution.id,
            idempotencyKey: execution.idempotencyKey,
          });
          const outcome = await performEffect(await getExecutionRowOrThrow(db, execution.id), deps);
          faultPoint("after_call");
          if (outcome.kind === "succeeded") {
            await recordOutcome(
              db,
              execution.id,
              {
                attempt_id: execution.attemptId,
                outcome: "succeeded",
                result: outcome.record,
                evidence: { ...outcome.evidence, record: outcome.record },
                next_status: "VALIDATING",
                fencing_token,
              },
              actor,
              provider,
            );
          } else if (outcome.kind === "failed") {
            await recordOutcome(
              db,
              execution.id,
              { attempt_id: execution.attemptId, outcome: "failed", error: outcome.reason, fencing_token },
              actor,
            );
          } else {
            await recordOutcome(
              db,
              execution.id,
              { attempt_id: execution.attemptId, outcome: "unknown", error: outcome.reason, fencing_token },
              actor,
            );
          }
          faultPoint("after_outcome");
          continue;
        }
        default:
          return `left in ${task.status}`;
      }
    }
    return "gave up after 6 rounds";
  } finally {
    clearInterval(renewing);
    // Handing the task back at once, as a worker that finishes does; a killed life never gets here.
    await releaseLease(db, job.taskId, fencing_token, actor).catch(() => undefined);
  }
}

async function runJob(job: WorkerJob): Promise<LifeResult> {
  try {
    return { kind: "done", detail: await live(job) };
  } catch (error) {
    if (isAppError(error)) return { kind: "refused", code: error.code, detail: error.message };
    return { kind: "bug", detail: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
}

process.on("message", (message: ToWorker) => {
  if (message.type !== "run") return;
  void runJob(message.job).then((result) => send({ type: "done", lifeId: message.job.lifeId, result }));
});
process.on("disconnect", () => void handle.close().finally(() => process.exit(0)));

// Warm before the first job: the pool's connection and Prisma's query compiler, as a deployed worker is before it takes work.
await db.$queryRaw`SELECT 1`;
send({ type: "ready" });
