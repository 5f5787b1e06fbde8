import { fork } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/model/permissions";
import { actorOf } from "@/lib/model/permissions";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { claimOldestLookup } from "@/lib/stores/effect-lookups";
import { answerLookup } from "@/lib/use-cases/tools/answer-lookup";
import { claimLookup } from "@/lib/use-cases/tools/claim-lookup";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { agent, failure, reviewRow, taskStatusOf, unreachable } from "@/tests/helpers/effects";
import { payoutTool, registered, sentCall } from "@/tests/helpers/registered-tools";
import type { LookupWorkerMessage } from "@/tests/postgres/lookup-worker-process";

/**
 * A `worker`-reconciled tool: the reconciler queues a lookup instead of
 * asking anyone itself; a worker process claims it under a lease and is
 * SIGKILLed holding it; once the lease has run out another worker claims it
 * (a greater fencing token), the dead worker's token can no longer answer,
 * and the new worker's answer settles the call. A lookup nobody answers by
 * its deadline sends the call to people.
 */
const TOOL = "deploy.release.worker";
const workerScript = path.resolve(import.meta.dirname, "lookup-worker-process.ts");

function worker(name: string): Principal {
  return {
    kind: "agent",
    id: `tok_${name}`,
    identity: `spiffe://verity.local/agent/${name}`,
    role: "agent",
    displayName: name,
    tenantId: "default",
    scopes: { workflows: "*", tools: [TOOL], take_over_leases: false },
  };
}

let pg: PostgresTestDatabase;
beforeAll(async () => {
  pg = await createPostgresTestDatabase();
  await registered(pg.db, payoutTool(TOOL, { method: "worker", deadline_seconds: 600 }));
});
afterAll(() => pg?.drop());

async function unknownCall() {
  const call = await sentCall(pg.db, TOOL);
  await recordOutcome(pg.db, call.id, { attempt_id: call.attemptId, outcome: "unknown", error: "timeout" }, agent);
  return call;
}

describe("worker lookups", () => {
  it("queued by the reconciler, which waits; a killed worker's claim is taken over after its lease, and the new worker's answer settles the call", async () => {
    const call = await unknownCall();
    const pending = await reconcileExecution(pg.db, call.id, unreachable);
    expect(pending).toMatchObject({ action: "not_due", lookup: "unknown" });
    expect(pending.execution.status).toBe("OUTCOME_UNKNOWN");
    // Asked again meanwhile: still one lookup, still waiting.
    await reconcileExecution(pg.db, call.id, unreachable);
    expect(await pg.db.effectLookup.count({ where: { executionId: call.id } })).toBe(1);

    const child = fork(workerScript, [], {
      execArgv: ["--import", "tsx"],
      env: { ...process.env, VERITY_WORKER_DATABASE_URL: pg.url, VERITY_WORKER_TOOL: TOOL },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once("exit", (_code, signal) => resolve(signal)),
    );
    const message = await new Promise<LookupWorkerMessage>((resolve) =>
      child.once("message", (m) => resolve(m as LookupWorkerMessage)),
    );
    expect(message.type).toBe("claimed");
    if (message.type !== "claimed") throw new Error("the worker claimed nothing");
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");

    // While its lease holds, nobody else gets the lookup.
    const rescuer = worker("lookup-worker-2");
    expect(await claimLookup(pg.db, TOOL, {}, rescuer)).toBeNull();
    // Once it has run out, the next claim takes it with a greater fencing token.
    const afterLease = new Date(new Date(message.leaseExpiresAt).getTime() + 1);
    const taken = await claimOldestLookup(pg.db, TOOL, actorOf(rescuer), 30_000, afterLease);
    expect(taken).toMatchObject({
      id: message.lookupId,
      status: "CLAIMED",
      claimedBy: rescuer.identity,
      fencingToken: message.fencingToken + 1,
    });
    const claims = await pg.db.auditEntry.findMany({
      where: { action: "lookup.claimed", subjectId: message.lookupId },
      orderBy: { seq: "asc" },
    });
    expect(claims.map((c) => c.details)).toEqual([
      expect.objectContaining({ fencing_token: 1 }),
      expect.objectContaining({ fencing_token: 2, taken_from: "spiffe://verity.local/agent/lookup-worker-1" }),
    ]);

    // The dead worker's answer, were it to arrive now, is not taken.
    const late = await failure(
      answerLookup(
        pg.db,
        message.lookupId,
        { fencing_token: message.fencingToken, result: "not_found" },
        worker("lookup-worker-1"),
        unreachable,
      ),
    );
    expect(late.code).toBe("lease_conflict");

    const answered = await answerLookup(
      pg.db,
      message.lookupId,
      {
        fencing_token: taken!.fencingToken,
        result: "found",
        record: { id: "rel_1", idempotency_key: call.idempotencyKey, ...(call.request as Record<string, unknown>) },
        evidence: { deploy_log: "https://ci.example/rel_1" },
      },
      rescuer,
      unreachable,
    );
    expect(answered.lookup.status).toBe("ANSWERED");
    expect(answered.reconciled).toMatchObject({ action: "reconciled_succeeded" });
    expect(answered.reconciled?.execution.evidence).toMatchObject({
      record: { id: "rel_1" },
      provider: { provider: `worker:${rescuer.identity}` },
    });
    expect(await taskStatusOf(pg.db, call.taskId)).toBe("VALIDATING");
  });

  it("unanswered past its deadline: the lookup expires and the call goes to people", async () => {
    const call = await unknownCall();
    await reconcileExecution(pg.db, call.id, unreachable);
    const lookup = await pg.db.effectLookup.findFirstOrThrow({ where: { executionId: call.id } });
    const result = await reconcileExecution(pg.db, call.id, unreachable, {
      now: new Date(lookup.deadlineAt.getTime() + 1),
    });
    expect(result).toMatchObject({ action: "needs_human", lookup: "unknown" });
    expect(result.execution.status).toBe("NEEDS_HUMAN");
    expect(await pg.db.effectLookup.findUniqueOrThrow({ where: { id: lookup.id } })).toMatchObject({
      status: "EXPIRED",
    });
    expect((await reviewRow(pg.db, { executionId: call.id })).reason).toContain("lookup_expired");
    // A worker arriving after the deadline finds nothing to claim.
    expect(await claimLookup(pg.db, TOOL, {}, worker("late-worker"))).toBeNull();
  });

  it("claims only for an agent whose scopes cover the tool", async () => {
    const outsider = {
      ...worker("outsider"),
      scopes: { workflows: "*" as const, tools: ["payments.refund"], take_over_leases: false },
    };
    expect((await failure(claimLookup(pg.db, TOOL, {}, outsider))).code).toBe("forbidden");
  });
});
