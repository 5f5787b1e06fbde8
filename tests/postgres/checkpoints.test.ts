import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { listRestores } from "@/lib/use-cases/checkpoints/list-restores";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { listCheckpoints } from "@/lib/use-cases/checkpoints/list-checkpoints";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { acquireLease } from "@/lib/stores/leases";
import { getTaskOrThrow, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { isAppError } from "@/lib/core/errors";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";

/**
 * Checkpoints and restores on the PostgreSQL server, with several
 * connections racing: one restore wins a version, a duplicate is applied
 * once, a boundary's checkpoint belongs to the transition that won its CAS,
 * and a restore killed mid-transaction leaves nothing half-written.
 */
const agent: Actor = { identity: "spiffe://verity.test/agent/worker", kind: "agent" };
const engineer: Actor = { identity: "spiffe://verity.test/user/engineer", kind: "user" };

let database: PostgresTestDatabase;
let db: Db;
beforeAll(async () => {
  database = await createPostgresTestDatabase({ poolSize: 8 });
  db = database.db;
}, 120_000);
afterAll(async () => database?.drop());

/** A task at READY (v3) with an on-demand checkpoint at PLANNING (v2), so a restore of it is a rewind. */
async function taskWithCheckpoint(): Promise<{ id: string; version: number; checkpointId: string }> {
  const { task } = await createTask(
    db,
    { workflow: "agent-task", intent_id: "race", budget: { currency_committed_usd: 5 } },
    agent,
  );
  const planning = await transitionTask(db, task.id, { expected_version: 1, to: "PLANNING" }, agent);
  const { checkpoint } = await createCheckpoint(db, task.id, {}, agent);
  const ready = await transitionTask(db, task.id, { expected_version: planning.task.version, to: "READY" }, agent);
  return { id: task.id, version: ready.task.version, checkpointId: checkpoint.id };
}

async function settle<T>(
  promises: Array<Promise<T>>,
): Promise<Array<{ ok: true; value: T } | { ok: false; code: string }>> {
  return Promise.all(
    promises.map((p) =>
      p.then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => {
          if (isAppError(error)) return { ok: false as const, code: error.code };
          throw error;
        },
      ),
    ),
  );
}

describe("restores racing on PostgreSQL", () => {
  it("six engineers restoring at the same version: exactly one applies, the others are recorded as version conflicts", async () => {
    const task = await taskWithCheckpoint();
    const results = await settle(
      Array.from({ length: 6 }, (_, i) =>
        restoreCheckpoint(
          db,
          task.checkpointId,
          { expected_version: task.version, rewind: true, reason: `engineer ${i}` },
          engineer,
        ),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).map((r) => (r.ok ? "" : r.code))).toEqual(Array(5).fill("version_conflict"));
    expect((await listTransitions(db, task.id)).map((l) => l.toVersion)).toEqual([1, 2, 3, 4]);
    const records = await listRestores(db, task.id);
    expect(records.map((r) => r.outcome).sort()).toEqual([
      "applied",
      "refused",
      "refused",
      "refused",
      "refused",
      "refused",
    ]);
    expect(records.filter((r) => r.outcome === "refused").every((r) => r.refusal === "version_conflict")).toBe(true);
  });

  it("the same restore delivered four times at once is applied once, and every delivery gets its result", async () => {
    const task = await taskWithCheckpoint();
    const body = {
      expected_version: task.version,
      rewind: true,
      reason: "duplicate delivery",
      restore_id: `rst-${task.id}`,
    };
    const results = await settle(
      Array.from({ length: 4 }, () => restoreCheckpoint(db, task.checkpointId, body, engineer)),
    );
    const applied = results.map((r) => (r.ok ? r.value : null));
    expect(applied.every((r) => r !== null)).toBe(true);
    expect(new Set(applied.map((r) => r!.transition.id)).size).toBe(1);
    expect(applied.filter((r) => !r!.replayed)).toHaveLength(1);
    expect(await db.checkpointRestore.count({ where: { taskId: task.id } })).toBe(1);
    expect((await getTaskOrThrow(db, task.id)).version).toBe(task.version + 1);
  });

  it("a restore racing the lease holder's writes: each version is written once, and after the restore the holder's token is refused", async () => {
    const task = await taskWithCheckpoint();
    const lease = await acquireLease(db, task.id, { ttl_seconds: 600 }, agent);
    let version = task.version;
    const writer = (async () => {
      const outcomes: string[] = [];
      for (let i = 0; i < 20; i++) {
        try {
          version = (
            await transitionTask(
              db,
              task.id,
              { expected_version: version, patch: { budget: { hops_used: i + 1 } }, fencing_token: lease.fencingToken },
              agent,
            )
          ).task.version;
          outcomes.push("ok");
        } catch (error) {
          if (!isAppError(error)) throw error;
          outcomes.push(error.code);
          if (error.code === "lease_conflict") break;
          version = (await getTaskOrThrow(db, task.id)).version;
        }
      }
      return outcomes;
    })();
    // Restore against whatever version the task is at when the engineer looks, retrying a lost race.
    let restored = null;
    for (let attempt = 0; attempt < 20 && !restored; attempt++) {
      const current = await getTaskOrThrow(db, task.id);
      const [result] = await settle([
        restoreCheckpoint(
          db,
          task.checkpointId,
          { expected_version: current.version, rewind: true, reason: "race" },
          engineer,
        ),
      ]);
      if (result?.ok) restored = result.value;
    }
    const outcomes = await writer;
    expect(restored).not.toBeNull();
    const log = await listTransitions(db, task.id, { limit: 1000 });
    expect(log.map((l) => l.toVersion)).toEqual(Array.from({ length: log.length }, (_, i) => i + 1));
    // Nothing was written after the restore: the holder's next write presented a fenced token.
    expect(log.at(-1)?.toVersion).toBe(restored!.task.version);
    expect(outcomes.every((o) => ["ok", "version_conflict", "lease_conflict"].includes(o))).toBe(true);
    expect(outcomes.slice(0, -1)).not.toContain("lease_conflict");
    if (outcomes.length < 20) expect(outcomes.at(-1)).toBe("lease_conflict");
  });
});

describe("automatic checkpoints under contention", () => {
  it("belong to the transition that won the CAS: eight writers opening gates at one version leave one transition and one checkpoint", async () => {
    const { task } = await createTask(db, { workflow: "agent-task", intent_id: "gates" }, agent);
    const gates = [
      "plan_approved",
      "implementation_complete",
      "review_passed",
      "tests_passing",
      "security_approved",
      "deployment_approved",
    ] as const;
    const results = await settle(
      Array.from({ length: 8 }, (_, i) =>
        transitionTask(
          db,
          task.id,
          { expected_version: 1, patch: { gates: { [gates[i % gates.length]!]: true } } },
          { ...agent, identity: `${agent.identity}-${i}` },
        ),
      ),
    );
    const winners = results.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    const checkpoints = await listCheckpoints(db, task.id);
    expect(checkpoints.map((c) => [c.trigger, c.stateVersion, c.integrity.ok])).toEqual([["gate_opened", 2, true]]);
    const winner = winners[0]!.ok ? winners[0]!.value : null;
    expect(checkpoints[0]?.createdBy).toBe(winner?.transition.actor);
  });
});

describe("a restore killed mid-transaction", () => {
  it("leaves nothing half-written: no transition, no record, the lease as it was", async () => {
    const task = await taskWithCheckpoint();
    const lease = await acquireLease(db, task.id, { ttl_seconds: 600 }, agent);
    // Another session holds the lease row, so the restore stops inside its transaction, after the plan and the task lock.
    const blocker = new pg.Client({ connectionString: database.url });
    const watcher = new pg.Client({ connectionString: database.url });
    await blocker.connect();
    await watcher.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query("SELECT 1 FROM leases WHERE task_id = $1 FOR UPDATE", [task.id]);
      const restore = restoreCheckpoint(
        db,
        task.checkpointId,
        { expected_version: task.version, rewind: true, reason: "killed" },
        engineer,
      ).then(
        () => "applied",
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      let killed = false;
      for (let i = 0; i < 200 && !killed; i++) {
        // pg_stat_activity is a snapshot per transaction: the watcher asks outside the blocker's.
        const { rows } = await watcher.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query ILIKE '%UPDATE leases%'",
        );
        if (rows[0]) {
          await watcher.query("SELECT pg_terminate_backend($1)", [rows[0].pid]);
          killed = true;
        } else {
          await new Promise((r) => setTimeout(r, 25));
        }
      }
      expect(killed).toBe(true);
      expect(await restore).not.toBe("applied");
      await blocker.query("ROLLBACK");
    } finally {
      await blocker.end();
      await watcher.end();
    }
    const after = await getTaskOrThrow(db, task.id);
    expect(after.version).toBe(task.version);
    expect(after.status).toBe("READY");
    expect((await listTransitions(db, task.id)).map((l) => l.toVersion)).toEqual([1, 2, 3]);
    expect(await db.checkpointRestore.count({ where: { taskId: task.id } })).toBe(0);
    const leaseRow = await db.lease.findFirstOrThrow({ where: { taskId: task.id } });
    expect(String(leaseRow.fencingToken)).toBe(lease.fencingToken);
    expect(leaseRow.expiresAt.getTime()).toBeGreaterThan(Date.now());
    // The engineer's retry goes through.
    const retried = await restoreCheckpoint(
      db,
      task.checkpointId,
      { expected_version: task.version, rewind: true, reason: "retry" },
      engineer,
    );
    expect(retried.task.version).toBe(task.version + 1);
  });
});
