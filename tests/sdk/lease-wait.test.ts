import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { getLease } from "@/lib/stores/leases";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { isVerityApiError } from "@/sdk";
import { withLease } from "@/sdk/lease";
import { openTestPglite } from "@/tests/helpers/pglite";
import { engineLeases } from "@/tests/sdk/engine-ledger";

/**
 * A worker restarted after a crash, under the same identity, cannot take
 * its dead predecessor's live lease (a lease is one process's): withLease
 * waits it out for `waitMs`, and a live holder that keeps renewing
 * outlasts the wait. The engine serves the lease API in-process.
 */
const bot: Actor = { identity: "spiffe://verity.local/agent/refund-bot", kind: "agent" };

let db: Db;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ db, close } = await openTestPglite());
});
afterAll(async () => close());

const newTask = async () => (await createTask(db, { workflow: "agent-task", intent_id: "lease-wait" }, bot)).task.id;

describe("withLease waiting out a live lease", () => {
  it("takes the task once the crashed process's lease expires, with a greater token", async () => {
    const taskId = await newTask();
    const dead = await engineLeases(db, bot).acquireLease(taskId, { ttlSeconds: 1 }); // then the process dies
    const waits: number[] = [];
    const token = await withLease(engineLeases(db, bot), taskId, async (lease) => lease.fencingToken, {
      ttlSeconds: 30,
      waitMs: 5_000,
      onWait: (_conflict, until) => waits.push(until),
    });
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(BigInt(token)).toBeGreaterThan(BigInt(dead.fencing_token));
  });

  it("without a wait, or against a holder that keeps renewing, gives up with the lease_conflict", async () => {
    const taskId = await newTask();
    const api = engineLeases(db, bot);
    let refusedAtOnce: unknown;
    let outlasted: unknown;
    await withLease(
      api,
      taskId,
      async () => {
        refusedAtOnce = await withLease(api, taskId, async () => "got it").catch((e: unknown) => e);
        outlasted = await withLease(api, taskId, async () => "got it", { waitMs: 1_500 }).catch((e: unknown) => e);
      },
      { ttlSeconds: 1, renewEveryMs: 250 },
    );
    expect(isVerityApiError(refusedAtOnce, "lease_conflict")).toBe(true);
    expect(isVerityApiError(outlasted, "lease_conflict")).toBe(true);
    expect((await getLease(db, taskId))?.expiresAt.getTime()).toBeLessThanOrEqual(Date.now());
  });
});
