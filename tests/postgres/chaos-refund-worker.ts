/**
 * One refund worker process of tests/postgres/chaos.test.ts: drives one
 * task's refund through the execution ledger on PostgreSQL and the sandbox
 * provider over HTTP, and SIGKILLs itself at the named fault point
 * (CHAOS_KILL_AT) — a real process dying at the exact step boundary, the
 * kernel's kill, no cleanup, no finally.
 *
 * Exit codes: 0 done or handed over (reconciliation / review), 3 refused by
 * the engine (an expected protocol refusal), 1 a bug.
 */
import { SandboxCrmConnector } from "@/lib/connectors/sandbox-crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox-payment";
import { openDatabase } from "@/lib/db";
import { performEffect } from "@/lib/engine/connectors";
import { getExecutionRowOrThrow, markSent, recordIntent, recordOutcome } from "@/lib/engine/executions";
import { acquireLease } from "@/lib/engine/leases";
import { getTaskOrThrow, transitionTask, type Actor } from "@/lib/engine/tasks";
import { isAppError } from "@/lib/errors";

export type FaultPoint = "after_intent" | "after_sent" | "after_call" | "after_outcome";

const env = {
  url: process.env.CHAOS_DATABASE_URL ?? "",
  taskId: process.env.CHAOS_TASK_ID ?? "",
  sandboxUrl: process.env.CHAOS_SANDBOX_URL ?? "",
  killAt: process.env.CHAOS_KILL_AT as FaultPoint | undefined,
  faults: (process.env.CHAOS_FAULTS ?? "").split(",").filter(Boolean),
};
if (!env.url || !env.taskId || !env.sandboxUrl) {
  console.error("chaos-refund-worker is started by tests/postgres/chaos.test.ts");
  process.exit(2);
}

// A restarted worker keeps its identity (same SPIFFE ID), so it re-acquires its own lease.
const actor: Actor = { identity: "spiffe://verity.test/agent/chaos-refund-worker", kind: "agent" };
export const refundRequest = { amount_cents: 4200, currency: "usd", charge_id: "ch_chaos", customer_id: "cus_chaos" };

function faultPoint(point: FaultPoint): void {
  if (env.killAt === point) process.kill(process.pid, "SIGKILL");
}

const handle = openDatabase({ kind: "postgres", url: env.url }, { poolSize: 1 });
const db = handle.db;
const deps = {
  // Per-request faults on the refund call only; lookups stay clean so reconciliation can see through them.
  payments: new SandboxPaymentConnector({ baseUrl: env.sandboxUrl, faults: env.faults, timeoutMs: 1_500 }),
  crm: new SandboxCrmConnector({ baseUrl: env.sandboxUrl, timeoutMs: 1_500 }),
};

async function run(): Promise<string> {
  const lease = await acquireLease(db, env.taskId, { ttl_seconds: 30 }, actor);
  const fencing_token = lease.fencingToken;
  for (let round = 0; round < 6; round++) {
    const task = await getTaskOrThrow(db, env.taskId);
    switch (task.status) {
      case "COMPLETED":
        return "completed";
      case "RECONCILING":
      case "WAITING_FOR_HUMAN":
        return `handed over (${task.status})`;
      case "VALIDATING":
        await transitionTask(
          db,
          env.taskId,
          { expected_version: task.version, to: "COMPLETED", patch: { subtasks: [{ id: "issue-refund", status: "COMPLETED" }] }, fencing_token, reason: "refund confirmed" },
          actor,
        );
        continue;
      case "RUNNING":
      case "WAITING_FOR_TOOL": {
        const intent = await recordIntent(
          db,
          env.taskId,
          { tool_call_id: "refund", tool: "payments.refund", request: refundRequest, expected_version: task.version, fencing_token },
          actor,
        );
        if (intent.kind === "receipt") {
          // The effect already happened (recorded by an earlier life of this worker, or reconciled): never call again.
          continue;
        }
        faultPoint("after_intent");
        const execution = intent.execution;
        await markSent(db, execution.id, { attempt_id: execution.attemptId }, actor);
        faultPoint("after_sent");
        const outcome = await performEffect(await getExecutionRowOrThrow(db, execution.id), deps);
        faultPoint("after_call");
        if (outcome.kind === "succeeded") {
          await recordOutcome(
            db,
            execution.id,
            { attempt_id: execution.attemptId, outcome: "succeeded", result: outcome.record, evidence: { ...outcome.evidence, record: outcome.record }, next_status: "VALIDATING", fencing_token },
            actor,
          );
        } else if (outcome.kind === "failed") {
          await recordOutcome(db, execution.id, { attempt_id: execution.attemptId, outcome: "failed", error: outcome.reason, fencing_token }, actor);
        } else {
          await recordOutcome(db, execution.id, { attempt_id: execution.attemptId, outcome: "unknown", error: outcome.reason, fencing_token }, actor);
        }
        faultPoint("after_outcome");
        continue;
      }
      default:
        return `left in ${task.status}`;
    }
  }
  return "gave up after 6 rounds";
}

try {
  console.log(await run());
  await handle.close();
  process.exit(0);
} catch (error) {
  await handle.close().catch(() => {});
  if (isAppError(error)) {
    console.log(`refused: ${error.code}: ${error.message}`);
    process.exit(3);
  }
  console.error(error);
  process.exit(1);
}
