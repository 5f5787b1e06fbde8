import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import type { Db } from "@/lib/db/client";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { acquireLease, getLease, releaseLease, renewLease } from "@/lib/stores/leases";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { isAppError } from "@/lib/core/errors";
import { openTestPglite } from "@/tests/helpers/pglite";

const workerA: Actor = { identity: "spiffe://verity.local/agent/worker-a", kind: "agent" };
const workerB: Actor = { identity: "spiffe://verity.local/agent/worker-b", kind: "agent" };
const operator: Actor = { identity: "spiffe://verity.local/user/operator", kind: "user" };

let db: Db;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ db, close } = await openTestPglite());
});
afterAll(async () => close());

async function newTask(): Promise<string> {
  return (await createTask(db, { workflow: "agent-task", intent_id: "lease-test" }, workerA)).task.id;
}

/** The lease's time runs out, as if its holder had paused that long (no sleep). */
async function pastExpiry(taskId: string): Promise<void> {
  await db.$executeRaw`UPDATE leases SET expires_at = now() - interval '1 second' WHERE task_id = ${taskId}`;
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string; details: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return { code: error.code, message: error.message, details: error.details };
    throw error;
  }
  throw new Error("expected an AppError");
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "ok";
  } catch (error) {
    if (isAppError(error)) return error.code;
    throw error;
  }
}

describe("leases and fencing tokens", () => {
  it("gives the lease to one worker at a time and a greater token to each new holder", async () => {
    const taskId = await newTask();
    const a = await acquireLease(db, taskId, { ttl_seconds: 60 }, workerA);
    expect(await codeOf(acquireLease(db, taskId, {}, workerB))).toBe("lease_conflict");
    await releaseLease(db, taskId, a.fencingToken, workerA);
    const b = await acquireLease(db, taskId, {}, workerB);
    expect(BigInt(b.fencingToken)).toBeGreaterThan(BigInt(a.fencingToken));
    expect((await getLease(db, taskId))?.holder).toBe(workerB.identity);
  });

  it("refuses the write of a worker whose lease expired and was taken over, and keeps the new owner's work", async () => {
    const taskId = await newTask();
    const a = await acquireLease(db, taskId, { ttl_seconds: 1 }, workerA);
    await new Promise((r) => setTimeout(r, 1_100)); // A pauses past its lease
    const b = await acquireLease(db, taskId, {}, workerB);
    const bWrite = await transitionTask(
      db,
      taskId,
      { expected_version: 1, to: "PLANNING", fencing_token: b.fencingToken },
      workerB,
    );
    expect(bWrite.task.version).toBe(2);
    // A wakes up, reads the new version and tries with its old token.
    expect(
      await codeOf(
        transitionTask(db, taskId, { expected_version: 2, to: "CANCELLED", fencing_token: a.fencingToken }, workerA),
      ),
    ).toBe("lease_conflict");
    // Without a token, an agent may not write under someone else's live lease either.
    expect(await codeOf(transitionTask(db, taskId, { expected_version: 2, to: "CANCELLED" }, workerA))).toBe(
      "lease_conflict",
    );
    expect(await codeOf(renewLease(db, taskId, a.fencingToken, {}, workerA))).toBe("lease_conflict");
    const row = await db.task.findFirstOrThrow({ where: { id: taskId } });
    expect([row.version, row.status]).toEqual([2, "PLANNING"]);
    expect(await db.transition.count({ where: { taskId } })).toBe(2);
  });

  it("lets a person act on a leased task; the version still guards the worker", async () => {
    const taskId = await newTask();
    const a = await acquireLease(db, taskId, {}, workerA);
    await transitionTask(db, taskId, { expected_version: 1, to: "CANCELLED", reason: "customer withdrew" }, operator);
    expect(
      await codeOf(
        transitionTask(db, taskId, { expected_version: 1, to: "PLANNING", fencing_token: a.fencingToken }, workerA),
      ),
    ).toBe("version_conflict");
  });

  it("belongs to one process: the same identity acquiring again while its lease is live is refused, naming the lease that holds it", async () => {
    const taskId = await newTask();
    const x = await acquireLease(db, taskId, { ttl_seconds: 60 }, workerA);
    const refused = await errorOf(acquireLease(db, taskId, {}, workerA));
    expect(refused.code).toBe("lease_conflict");
    expect(refused.message).toContain(`fencing token ${x.fencingToken} (lease ${x.leaseId})`);
    expect(refused.details).toMatchObject({
      holder: workerA.identity,
      fencingToken: x.fencingToken,
      leaseId: x.leaseId,
    });
    // The refused acquire changed nothing.
    expect(await getLease(db, taskId)).toMatchObject({ leaseId: x.leaseId, fencingToken: x.fencingToken });
  });

  it("gives a retried acquire that names its lease_id the same lease, renewed; another lease_id is a conflict", async () => {
    const taskId = await newTask();
    const first = await acquireLease(db, taskId, { ttl_seconds: 60, lease_id: "proc-1" }, workerA);
    const retried = await acquireLease(db, taskId, { ttl_seconds: 120, lease_id: "proc-1" }, workerA);
    expect([retried.leaseId, retried.fencingToken]).toEqual(["proc-1", first.fencingToken]);
    expect(retried.expiresAt.getTime()).toBeGreaterThan(first.expiresAt.getTime());
    expect(await codeOf(acquireLease(db, taskId, { lease_id: "proc-2" }, workerA))).toBe("lease_conflict");
    // Another identity cannot take it by naming the lease id.
    expect(await codeOf(acquireLease(db, taskId, { lease_id: "proc-1" }, workerB))).toBe("lease_conflict");
    await releaseLease(db, taskId, first.fencingToken, workerA);
    const again = await acquireLease(db, taskId, { lease_id: "proc-1" }, workerA);
    expect(BigInt(again.fencingToken)).toBeGreaterThan(BigInt(first.fencingToken));
  });

  it("answers bad lease ids with the field named", async () => {
    const taskId = await newTask();
    const bad = await errorOf(acquireLease(db, taskId, { lease_id: "has spaces" }, workerA));
    expect(bad.code).toBe("validation_failed");
    expect(JSON.stringify(bad.details)).toContain("lease_id");
    expect(await getLease(db, taskId)).toBeNull();
  });

  it("fences a second process of the same identity: after the first one's lease expires, the second's token is greater and the first's writes are refused", async () => {
    const taskId = await newTask();
    const x = await acquireLease(db, taskId, { ttl_seconds: 60 }, workerA);
    await pastExpiry(taskId); // X pauses past its lease
    const y = await acquireLease(db, taskId, {}, workerA);
    expect(BigInt(y.fencingToken)).toBeGreaterThan(BigInt(x.fencingToken));
    expect(y.leaseId).not.toBe(x.leaseId);
    await transitionTask(db, taskId, { expected_version: 1, to: "PLANNING", fencing_token: y.fencingToken }, workerA);
    const fenced = await errorOf(
      transitionTask(db, taskId, { expected_version: 2, to: "CANCELLED", fencing_token: x.fencingToken }, workerA),
    );
    expect(fenced.code).toBe("lease_conflict");
    // The message names the lease that holds it, not the refused token as if it held.
    expect(fenced.message).toContain(`Fencing token ${x.fencingToken} is not the current lease`);
    expect(fenced.message).toContain(`fencing token ${y.fencingToken} (lease ${y.leaseId})`);
    // Without a token, the same identity cannot write under a live lease either: it may be the other process.
    expect(await codeOf(transitionTask(db, taskId, { expected_version: 2, to: "CANCELLED" }, workerA))).toBe(
      "lease_conflict",
    );
    expect(await codeOf(renewLease(db, taskId, x.fencingToken, {}, workerA))).toBe("lease_conflict");
    expect((await db.task.findFirstOrThrow({ where: { id: taskId } })).status).toBe("PLANNING");
  });

  it("binds an attempt to its lease: a fenced process cannot send the attempt, nor get a SENT attempt of another lease as its own", async () => {
    const taskId = await newTask();
    let version = 1;
    const x = await acquireLease(db, taskId, { ttl_seconds: 60 }, workerA);
    for (const to of ["PLANNING", "READY", "RUNNING"]) {
      version = (
        await transitionTask(db, taskId, { expected_version: version, to, fencing_token: x.fencingToken }, workerA)
      ).task.version;
    }
    const intent = await recordIntent(
      db,
      taskId,
      {
        tool_call_id: "note-1",
        tool: "crm.add_note",
        request: { customer_id: "cus_1", text: "hello" },
        expected_version: version,
        fencing_token: x.fencingToken,
      },
      workerA,
    );
    expect(intent.kind).toBe("proceed");
    expect((await getExecutionRowOrThrow(db, intent.execution.id)).leaseToken).toBe(BigInt(x.fencingToken));
    await pastExpiry(taskId); // X stalls between intent and send, past its lease
    const y = await acquireLease(db, taskId, {}, workerA);
    // X, fenced, may neither send (with or without its token) nor replay the intent as its own.
    const attempt = { attempt_id: intent.execution.attemptId };
    expect(
      await codeOf(markSent(db, intent.execution.id, { ...attempt, fencing_token: x.fencingToken }, workerA)),
    ).toBe("lease_conflict");
    expect(await codeOf(markSent(db, intent.execution.id, attempt, workerA))).toBe("lease_conflict");
    const replay = {
      tool_call_id: "note-1",
      tool: "crm.add_note",
      request: { customer_id: "cus_1", text: "hello" },
      expected_version: version + 1,
    };
    expect(await codeOf(recordIntent(db, taskId, { ...replay, fencing_token: x.fencingToken }, workerA))).toBe(
      "lease_conflict",
    );
    expect((await getExecutionRowOrThrow(db, intent.execution.id)).status).toBe("INTENT_RECORDED");
    // Y, the current lease, resumes the same attempt and sends it; the attempt is now Y's.
    expect((await recordIntent(db, taskId, { ...replay, fencing_token: y.fencingToken }, workerA)).kind).toBe(
      "proceed",
    );
    const sent = await markSent(db, intent.execution.id, { ...attempt, fencing_token: y.fencingToken }, workerA);
    expect(sent.status).toBe("SENT");
    expect((await getExecutionRowOrThrow(db, intent.execution.id)).leaseToken).toBe(BigInt(y.fencingToken));
    // Y's retry of its own markSent is answered; X's is refused: it must not send too.
    expect(
      (await markSent(db, intent.execution.id, { ...attempt, fencing_token: y.fencingToken }, workerA)).status,
    ).toBe("SENT");
    expect(
      await codeOf(markSent(db, intent.execution.id, { ...attempt, fencing_token: x.fencingToken }, workerA)),
    ).toBe("lease_conflict");
    expect(await db.executionEvent.count({ where: { executionId: intent.execution.id, toStatus: "SENT" } })).toBe(1);
  });
});
