import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { takeOverLease } from "@/lib/stores/leases";
import type { Actor } from "@/lib/model/actor";
import { agent, executionRow, failure, leasedRunningTask, refund } from "@/tests/helpers/effects";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";

/**
 * A send and a takeover of the task's lease, at the same moment, on a real
 * server with real row locks. The sender's transaction checks that its lease
 * is current and holds the lease row FOR SHARE until it commits
 * (lease-fencing.ts), so a takeover either comes first, and the send is
 * refused, or waits for the send's commit, and the new holder finds the
 * attempt SENT: it must reconcile it by a lookup, never send it again. What
 * must never happen: the takeover committed, the new holder told nothing was
 * sent, and the old holder's SENT committing after it.
 */
let database: PostgresTestDatabase;
let watcher: pg.Client;
beforeAll(async () => {
  database = await createPostgresTestDatabase({ poolSize: 6 });
  watcher = new pg.Client({ connectionString: database.url });
  await watcher.connect();
});
afterAll(async () => {
  await watcher?.end();
  await database?.drop();
});

const successor: Actor = { identity: "spiffe://verity.local/agent/successor", kind: "agent" };

/** A RUNNING refund task whose lease `agent` holds. */
const leasedTask = (intentId: string) => leasedRunningTask(database.db, intentId, 600);

/** The refund's intent on the task, by `actor` under its lease's token. */
function refundIntent(
  task: { id: string; version: number },
  fencingToken: string,
  actor: Actor,
  extra: { send?: boolean } = {},
) {
  return recordIntent(
    database.db,
    task.id,
    {
      tool_call_id: "refund-1",
      tool: "payments.refund",
      request: refund,
      expected_version: task.version,
      fencing_token: fencingToken,
      ...extra,
    },
    actor,
  );
}

/** Whether another session of this database is waiting for a lock while running a statement matching `like`. */
async function waitingOnLock(like: string): Promise<boolean> {
  // pg_stat_activity is a snapshot per transaction: the watcher asks outside any other.
  for (let i = 0; i < 400; i++) {
    const { rows } = await watcher.query(
      "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query ILIKE $1",
      [like],
    );
    if (rows.length > 0) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

/**
 * Runs `send` with its transaction held open at its first write to `table`
 * (another session holds that table), starts the takeover meanwhile, and
 * reports whether the takeover had to wait for the send before it was let go.
 */
async function raceTakeoverWith<T>(table: string, send: () => Promise<T>, taskId: string) {
  const blocker = new pg.Client({ connectionString: database.url });
  await blocker.connect();
  try {
    await blocker.query("BEGIN");
    await blocker.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
    const sending = send().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    expect(await waitingOnLock(`%${table}%`)).toBe(true);
    let takeoverDone = false;
    const takeover = takeOverLease(database.db, taskId, { ttl_seconds: 600 }, successor).finally(() => {
      takeoverDone = true;
    });
    const takeoverWaited = await waitingOnLock("%FROM leases%FOR UPDATE%");
    const doneBeforeRelease = takeoverDone;
    await blocker.query("ROLLBACK");
    return { sending: await sending, taken: await takeover, takeoverWaited, doneBeforeRelease };
  } finally {
    await blocker.end();
  }
}

describe("a send racing a takeover of the lease", () => {
  it("an intent sent with itself: the takeover waits for its commit, and the new holder is told to reconcile, not to send", async () => {
    const task = await leasedTask("send-vs-takeover");
    const race = await raceTakeoverWith(
      // The checkpoint before an irreversible effect is written after the lease check, in the same transaction.
      "checkpoints",
      () => refundIntent(task, task.fencingToken, agent, { send: true }),
      task.id,
    );
    expect(race.takeoverWaited).toBe(true);
    expect(race.doneBeforeRelease).toBe(false);
    if (!race.sending.ok) throw race.sending.error;
    const sent = race.sending.value;
    if (sent.kind !== "proceed") throw new Error(`expected proceed, got ${sent.kind}`);
    expect(await executionRow(database.db, sent.execution.id)).toMatchObject({
      status: "SENT",
      leaseToken: BigInt(task.fencingToken),
    });
    expect(race.taken.takenFrom?.fencingToken).toBe(task.fencingToken);
    expect(BigInt(race.taken.lease.fencingToken)).toBe(BigInt(task.fencingToken) + 1n);
    // The new holder's own attempt at the call finds it SENT: its outcome is unknown until looked up.
    const retry = await failure(
      refundIntent({ id: task.id, version: sent.task!.version }, race.taken.lease.fencingToken, successor, {
        send: true,
      }),
    );
    expect(retry).toMatchObject({
      code: "invariant_violated",
      invariants: ["unknown_outcome_reconciled_before_retry"],
    });
    expect((await executionRow(database.db, sent.execution.id)).attempt).toBe(1);
  });

  it("markSent: the same, its SENT committed before the takeover", async () => {
    const task = await leasedTask("mark-sent-vs-takeover");
    const intent = await refundIntent(task, task.fencingToken, agent);
    if (intent.kind !== "proceed") throw new Error(`expected proceed, got ${intent.kind}`);
    const race = await raceTakeoverWith(
      // markSent's move of the attempt, after its lease check.
      "executions",
      () =>
        markSent(
          database.db,
          intent.execution.id,
          { attempt_id: intent.execution.attemptId, fencing_token: task.fencingToken },
          agent,
        ),
      task.id,
    );
    expect(race.takeoverWaited).toBe(true);
    expect(race.doneBeforeRelease).toBe(false);
    if (!race.sending.ok) throw race.sending.error;
    expect(await executionRow(database.db, intent.execution.id)).toMatchObject({
      status: "SENT",
      leaseToken: BigInt(task.fencingToken),
    });
    expect(race.taken.takenFrom?.fencingToken).toBe(task.fencingToken);
  });
});
