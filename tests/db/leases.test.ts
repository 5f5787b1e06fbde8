import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db";
import { acquireLease, getLease, releaseLease, renewLease } from "@/lib/engine/leases";
import { createTask, transitionTask, type Actor } from "@/lib/engine/tasks";
import { isAppError } from "@/lib/errors";
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
    // Re-acquiring our own live lease renews it and keeps the token.
    expect((await acquireLease(db, taskId, {}, workerA)).fencingToken).toBe(a.fencingToken);
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
    const bWrite = await transitionTask(db, taskId, { expected_version: 1, to: "PLANNING", fencing_token: b.fencingToken }, workerB);
    expect(bWrite.task.version).toBe(2);
    // A wakes up, reads the new version and tries with its old token.
    expect(await codeOf(transitionTask(db, taskId, { expected_version: 2, to: "CANCELLED", fencing_token: a.fencingToken }, workerA))).toBe("lease_conflict");
    // Without a token, an agent may not write under someone else's live lease either.
    expect(await codeOf(transitionTask(db, taskId, { expected_version: 2, to: "CANCELLED" }, workerA))).toBe("lease_conflict");
    expect(await codeOf(renewLease(db, taskId, a.fencingToken, {}, workerA))).toBe("lease_conflict");
    const row = await db.task.findUniqueOrThrow({ where: { id: taskId } });
    expect([row.version, row.status]).toEqual([2, "PLANNING"]);
    expect(await db.transition.count({ where: { taskId } })).toBe(2);
  });

  it("lets a person act on a leased task; the version still guards the worker", async () => {
    const taskId = await newTask();
    const a = await acquireLease(db, taskId, {}, workerA);
    await transitionTask(db, taskId, { expected_version: 1, to: "CANCELLED", reason: "customer withdrew" }, operator);
    expect(await codeOf(transitionTask(db, taskId, { expected_version: 1, to: "PLANNING", fencing_token: a.fencingToken }, workerA))).toBe("version_conflict");
  });
});
