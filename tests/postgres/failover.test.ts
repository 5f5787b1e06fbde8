/**
 * Regional failover (spec 000, "Tests required"; issue 4), with two real
 * PostgreSQL databases and real processes:
 *
 *   primary   a migrated database; refund workers (OS processes running the
 *             demo agent) drive N tasks against the sandbox provider over
 *             HTTP, in two waves
 *   backup    `pg_dump -Fc` of the primary during the first wave,
 *             `pg_restore` into a fresh database: the standby
 *   shipping  every checkpoint the primary commits after the backup is
 *             exported and imported on the standby once it is SHIP_LAG_MS
 *             old, as a log shipper would; what is not shipped is lost
 *   loss      in the middle of the second wave, at a seeded count of refunds,
 *             the workers are SIGKILLed and the database dropped WITH
 *             (FORCE); requests already at the provider still land
 *   takeover  on the standby (lib/use-cases/failover/failover.ts): what the backup left
 *             unsettled is reconciled and each task rolled forward from its
 *             newest shipped valid checkpoint; new worker processes then
 *             record the calls lost with the primary and resume; the
 *             reconciler settles unknown outcomes between rounds, as the
 *             server's loop would
 *
 * Asserted: zero duplicate refunds at the provider; every task COMPLETED or
 * in the review queue with an open review (nothing stuck, nothing failed);
 * the ledger's succeeded refunds are the provider's, and a completed task
 * without one has its receipt in the checkpoint it was rolled forward to;
 * gapless logs; every checkpoint on the standby verifies, and none would
 * without the primary's keys; no divergence raised, and the server's
 * verifier afterwards flags only the lost effects' execution ids; what a
 * re-send under the key does at the provider. Measured and printed: the
 * recovery point and the recovery time (docs/recovery.md).
 */
import { findExecutions } from "@/lib/stores/execution-store";
import { openedAlert } from "@/lib/use-cases/alerts/divergence";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orderOf, taskIdOf } from "@/programs/agent/order";
import { REFUND_CALL } from "@/programs/agent/plan";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { openDatabase, type DatabaseHandle, type Db } from "@/lib/db/client";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { importCheckpoint } from "@/lib/use-cases/checkpoints/import-checkpoint";
import { exportCheckpoint } from "@/lib/use-cases/checkpoints/export-checkpoint";
import { listRestores } from "@/lib/use-cases/checkpoints/list-restores";
import { getCheckpointDetail } from "@/lib/use-cases/checkpoints/get-checkpoint-detail";
import { listCheckpoints } from "@/lib/use-cases/checkpoints/list-checkpoints";
import { performEffect } from "@/lib/connectors/effects";
import { takeOverTask, type TakeoverReport } from "@/lib/use-cases/failover/failover";
import { reconcileDue, verifySettled } from "@/lib/use-cases/reconciliation/reconciler";
import type { Actor } from "@/lib/model/actor";
import { AppError } from "@/lib/core/errors";
import { seededRandom } from "@/lib/core/seeded-random";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";
import { createPostgresTestDatabase, testDatabaseUrl, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { createRefundTask, engineClientOf, failoverAgent } from "./failover-agent";
import {
  buildRefundWorker,
  committedVersions,
  count,
  expectGaplessTransitionLogs,
  notAtRest,
  partition,
  providerRefunds as refundsAt,
  runRefundWorkers,
  sleep,
  startRefundWorker,
  waitUntil,
  type RefundWorker,
  type RefundWorkerOptions,
} from "./failover-harness";

const SEED = Number(process.env.FAILOVER_SEED ?? 4_242);
const TASKS = 30;
const WORKERS = 3;
/** Tasks each primary worker drives at once. A standby worker takes all of its tasks at once: the recovery time is not spent queueing. */
const CONCURRENCY = 5;
const SHIP_LAG_MS = 300;
const SHIP_EVERY_MS = 40;
/** Each provider call draws one (seeded per task): requests in flight at the loss, some still landing after it. */
const LATENCIES = ["latency=60", "latency=150", "latency=400"];
const random = seededRandom(SEED);
/**
 * Traffic comes in two waves, so that however long the restore takes on a
 * busy machine, tasks are in flight at the loss: the backup is taken during
 * the first wave, the second starts once the standby is restored and
 * receiving checkpoints, and the loss comes in the middle of it.
 */
const FIRST_WAVE = 12;
const backupAtRefunds = 3 + Math.floor(random() * 4);
const lossAfterSecondWaveRefunds = 4 + Math.floor(random() * 6);

const engineer: Actor = { identity: "spiffe://verity.test/user/failover-engineer", kind: "user" };
const run = promisify(execFile);

let primary: PostgresTestDatabase | undefined;
let standby: { handle: DatabaseHandle; name: string } | undefined;
let sandbox: Sandbox;
let workerOptions: RefundWorkerOptions;
let scratch: string;

beforeAll(async () => {
  const script = buildRefundWorker();
  primary = await createPostgresTestDatabase({ poolSize: 4 });
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1" });
  workerOptions = {
    script,
    sandboxUrl: sandbox.url,
    seed: SEED,
    faults: LATENCIES,
    concurrency: CONCURRENCY,
    workers: WORKERS,
  };
  scratch = mkdtempSync(path.join(tmpdir(), "verity-failover-"));
});
afterAll(async () => {
  await sandbox?.close();
  await primary?.drop();
  await standby?.handle.close();
  if (standby) await adminQuery(`DROP DATABASE IF EXISTS ${standby.name} WITH (FORCE)`);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("regional failover: primary lost mid-traffic, standby from backup plus shipped checkpoints", () => {
  it(
    `${TASKS} refunds, backup at ${backupAtRefunds}, loss ${lossAfterSecondWaveRefunds} refunds into the second wave (seed ${SEED}): no duplicate, nobody stuck, recovery point and time measured`,
    { timeout: 240_000 },
    async () => {
      const orders = Array.from({ length: TASKS }, (_, i) => orderOf(`fo${SEED}-${i + 1}`, 1_000 + 37 * i, "usd"));
      const taskIds = orders.map(taskIdOf);
      const deps = {
        payments: new SandboxPaymentConnector({ baseUrl: sandbox.url, timeoutMs: 3_000 }),
        crm: new SandboxCrmConnector({ baseUrl: sandbox.url, timeoutMs: 3_000 }),
      };
      const primaryDatabase = primary!;

      // ── Traffic on the primary ─────────────────────────────────────────
      const client = engineClientOf(primaryDatabase.db, sandbox.url);
      for (const [i, order] of orders.entries()) await createRefundTask(client, order, taskIds[i]!);
      const firstWave = partition(orders.slice(0, FIRST_WAVE), WORKERS).map((slice) =>
        startRefundWorker(workerOptions, primaryDatabase.url, "run", slice),
      );
      await waitForRefunds(backupAtRefunds, firstWave);

      // ── Backup, restored into a fresh database: the standby ────────────
      const backupStarted = Date.now();
      const dump = path.join(scratch, "primary.dump");
      await run("pg_dump", ["-Fc", "--no-owner", "-f", dump, primaryDatabase.url]);
      const dumped = Date.now();
      const name = `verity_test_standby_${SEED}_${process.pid}`;
      await adminQuery(`CREATE DATABASE ${name}`);
      const standbyUrl = withDatabase(testDatabaseUrl(), name);
      standby = { handle: openDatabase({ kind: "postgres", url: standbyUrl }, { poolSize: 6 }), name };
      await run("pg_restore", ["--no-owner", "--exit-on-error", "-d", standbyUrl, dump]);
      const restored = Date.now();
      const db = standby.handle.db;

      // ── Shipping, until the loss ───────────────────────────────────────
      const shipper = startShipper(
        primaryDatabase.db,
        db,
        new Set((await db.checkpoint.findMany({ select: { id: true } })).map((c) => c.id)),
      );
      const secondWaveFrom = Math.max(FIRST_WAVE, (await providerRefunds()).length);
      const secondWave = partition(orders.slice(FIRST_WAVE), WORKERS).map((slice) =>
        startRefundWorker(workerOptions, primaryDatabase.url, "run", slice),
      );
      await waitForRefunds(secondWaveFrom + lossAfterSecondWaveRefunds, secondWave);
      // The link to the standby fails first: shipping stops while the primary
      // keeps committing for two more refunds, then the region is lost. Without
      // that gap a primary that happened to commit nothing in the last ship lag
      // before the loss lost nothing, and the roll-forward over lost work went
      // untested (seen once under load: 0 lost).
      const shipped = await shipper.stop();
      // Two more refunds at the provider, and two more transitions committed
      // on the primary: a refund is made before its task moves, so under load
      // the refunds alone could all precede the next commit (seen: 0 lost).
      const transitionsAtStop = await primaryDatabase.db.transition.count();
      await waitForRefunds(secondWaveFrom + lossAfterSecondWaveRefunds + 2, secondWave);
      await waitUntil(
        async () => (await primaryDatabase.db.transition.count()) >= transitionsAtStop + 2,
        secondWave,
        "two transitions committed on the primary after shipping stopped",
      );
      const primaryWorkers = [...firstWave, ...secondWave];

      // ── Loss ───────────────────────────────────────────────────────────
      const lossAt = Date.now();
      for (const w of primaryWorkers) w.child.kill("SIGKILL");
      const exits = await Promise.all(primaryWorkers.map((w) => w.exited));
      expect(
        exits.filter((e) => e.code !== 0 && e.signal !== "SIGKILL").map((e) => e.stderr.slice(-1500)),
        "a primary worker crashed",
      ).toEqual([]);
      // The measurement tap: what the primary had committed, read after its
      // workers died and before it is dropped. The standby never sees this.
      const truth: Committed = { versions: await committedVersions(primaryDatabase.db) };
      const refundsAtLoss = (await providerRefunds()).length;
      primary = undefined;
      await primaryDatabase.drop();

      // ── Takeover: roll forward, then resume ────────────────────────────
      const takeover = new Map<string, TakeoverReport>();
      for (const id of taskIds) takeover.set(id, await takeOverTask(db, id, engineer, deps));
      const tookOver = Date.now();
      const ordersOfTasks = (ids: string[]) => orders.filter((o) => ids.includes(taskIdOf(o)));
      const toResume = await notAtRest(db, taskIds);
      const lines = await runRefundWorkers(workerOptions, standbyUrl, "resume", ordersOfTasks(toResume));
      const resumed = Date.now();
      const reconciled: Record<string, number> = {};
      let rounds = 0;
      for (
        let unsettled = await notAtRest(db, taskIds);
        unsettled.length > 0 && rounds < 4;
        unsettled = await notAtRest(db, taskIds)
      ) {
        rounds++;
        const summary = await reconcileDue(db, deps, { sentTimeoutMs: 0, limit: 500 });
        expect(summary.errors, "the reconciler failed").toEqual([]);
        for (const [action, n] of Object.entries(summary.counts)) reconciled[action] = (reconciled[action] ?? 0) + n;
        lines.push(...(await runRefundWorkers(workerOptions, standbyUrl, "resume", ordersOfTasks(unsettled))));
      }
      const settled = Date.now();

      // ── Assertions ─────────────────────────────────────────────────────
      expect(shipped.errors, "a shipped checkpoint was refused by the standby").toEqual([]);
      expect(
        lines
          .filter((l) => (l.lost && "error" in l.lost) || l.report.outcome === "error")
          .map((l) => ({ task: l.task, lost: l.lost, report: l.report.detail })),
      ).toEqual([]);

      // 1. Zero duplicate refunds, from the provider's own records.
      const refunds = await providerRefunds();
      const refundsOf = (taskId: string) => refunds.filter((r) => r.metadata.task_id === taskId);
      expect(
        taskIds.filter((id) => refundsOf(id).length > 1),
        "tasks refunded more than once",
      ).toEqual([]);
      expect(new Set(refunds.map((r) => r.idempotency_key)).size).toBe(refunds.length);

      // 2. Nobody stuck or failed: COMPLETED, or in the review queue with an open review.
      const tasks = await db.task.findMany({ where: { id: { in: taskIds } } });
      // Opened, as the engine reads them (their results are sealed at rest).
      const executions = await findExecutions(db, { where: { taskId: { in: taskIds } } });
      const survived = new Set(executions.map((e) => e.id));
      const reviews = await db.review.findMany({ where: { taskId: { in: taskIds } } });
      const inReview = tasks.filter(
        (t) => t.status === "WAITING_FOR_HUMAN" && reviews.some((r) => r.taskId === t.id && r.status === "OPEN"),
      );
      expect(
        tasks.filter((t) => t.status !== "COMPLETED" && !inReview.includes(t)).map((t) => `${t.id} ${t.status}`),
      ).toEqual([]);
      expect(tasks).toHaveLength(TASKS);

      // 3. Effects and ledger agree with the provider.
      for (const task of tasks) {
        const refund = executions.find((e) => e.taskId === task.id && e.toolCallId === REFUND_CALL);
        const atProvider = refundsOf(task.id);
        if (refund && ["SUCCEEDED", "RECONCILED_SUCCEEDED"].includes(refund.status)) {
          expect(atProvider, `${task.id}: succeeded without a refund at the provider`).toHaveLength(1);
          expect(refund.evidence, `${task.id}: success without evidence`).not.toBeNull();
          // The agent records refund_id, the reconciler and the failover the provider's record (id).
          const result = refund.result as { refund_id?: string; id?: string };
          expect([result.refund_id, result.id], `${task.id}: the ledger's refund is not the provider's`).toContain(
            atProvider[0]!.id,
          );
        }
        if (task.status !== "COMPLETED") continue;
        expect(atProvider, `${task.id}: completed with ${atProvider.length} refunds`).toHaveLength(1);
        const state = task.state as { subtasks: Array<{ mandatory: boolean; status: string }> };
        expect(state.subtasks.filter((s) => s.mandatory && s.status !== "COMPLETED")).toEqual([]);
        if (refund && ["SUCCEEDED", "RECONCILED_SUCCEEDED"].includes(refund.status)) continue;
        // Completed by a roll-forward whose refund row was lost with the
        // primary: the receipt travelled in the checkpoint, and it names the
        // execution the provider's record names.
        const applied = (await listRestores(db, task.id)).find((r) => r.outcome === "applied");
        expect(
          applied,
          `${task.id}: completed without a refund receipt in the ledger and without a roll-forward`,
        ).toBeDefined();
        const detail = await getCheckpointDetail(db, applied!.checkpointId);
        expect(detail.document?.tool_receipt_ids).toContain(atProvider[0]!.metadata.execution_id);
      }

      // 4. Gapless logs, checkpoints that verify and unbroken audit chains, on the standby.
      await expectGaplessTransitionLogs(db, tasks);
      for (const task of tasks) {
        const invalid = (await listCheckpoints(db, task.id)).filter((c) => !c.integrity.ok);
        expect(
          invalid.map(
            (c) =>
              `${c.id}: ${c.integrity.checks
                .filter((k) => !k.ok)
                .map((k) => k.message)
                .join("; ")}`,
          ),
        ).toEqual([]);
      }
      // The audit chains restored from the backup continue on the standby without a break.
      const audit = await verifyAuditChains(db);
      expect(audit.breaks, "audit chains on the standby").toEqual([]);
      // A standby without the primary's checkpoint keys verifies nothing it was shipped.
      const sample = [...shipped.ids].at(-1);
      if (sample) {
        const otherKeys = { activeKeyId: "other-region", keys: { "other-region": "x".repeat(48) } };
        await expect(
          importCheckpoint(db, await exportCheckpoint(db, sample), { keyring: otherKeys }),
        ).rejects.toBeInstanceOf(AppError);
      }

      // 5. Divergence: none raised on the way. Then the server's verifier
      //    (verifySettled, its background loop) looks every settled effect up
      //    again; it may raise only the known false alarm of a lost effect: the
      //    provider's record names the lost primary's execution, not the row
      //    that recorded it here (docs/recovery.md, "Limits").
      const lostCalls = lines.flatMap((l) => (l.lost && "calls" in l.lost ? l.lost.calls : []));
      const lostEffects = new Map(
        lostCalls.flatMap((c) => (c.kind === "recorded_lost_effect" ? [[c.executionId, c] as const] : [])),
      );
      for (const call of lostEffects.values())
        expect(survived.has(call.lostExecutionId), `${call.lostExecutionId} is on the standby`).toBe(false);
      expect(await db.divergenceAlert.count(), "divergence raised during the failover").toBe(0);
      const verified = await verifySettled(db, deps, { limit: 500 });
      for (const raised of verified.raised) {
        const alert = await openedAlert(
          db,
          await db.divergenceAlert.findUniqueOrThrow({ where: { id: raised.alertId } }),
        );
        const lostEffect = lostEffects.get(alert.executionId ?? "");
        expect(lostEffect, `verifier: ${alert.message}`).toBeDefined();
        expect(alert.external).toMatchObject({
          mismatches: ["metadata.execution_id"],
          record: { id: lostEffect!.providerId, metadata: { execution_id: lostEffect!.lostExecutionId } },
        });
      }

      // 6. What a re-send under the key does, over HTTP: the same execution's
      //    request is answered with the original refund; the same key under an
      //    execution the provider has not seen (one lost with the primary) is
      //    refused. Never a second refund either way.
      const survivor = executions.find(
        (e) => e.toolCallId === REFUND_CALL && refundsOf(e.taskId)[0]?.metadata.execution_id === e.id,
      );
      expect(survivor, "no refund whose execution row is on the standby").toBeDefined();
      const original = refundsOf(survivor!.taskId)[0]!;
      expect(await performEffect(survivor!, deps)).toMatchObject({
        kind: "succeeded",
        record: { id: original.id },
        evidence: { replayed: true },
      });
      expect(await performEffect({ ...survivor!, id: "exec_lost_with_the_primary" }, deps)).toMatchObject({
        kind: "unknown",
        reason: "idempotency_key_reused",
      });
      expect(await providerRefunds()).toHaveLength(refunds.length);

      // 7. The failover was exercised: something was shipped, rolled forward and lost.
      const point = recoveryPoint(truth, takeover);
      expect([...takeover.values()].filter((t) => t.rollForward.kind === "rolled_forward").length).toBeGreaterThan(0);
      expect(point.lost).toBeGreaterThan(0);

      // ── Measurements ───────────────────────────────────────────────────
      const firstWrite = await db.transition.findFirst({
        where: { createdAt: { gt: new Date(lossAt) } },
        orderBy: { createdAt: "asc" },
      });
      // A task is resumed when a standby worker commits its first write to it.
      const resumedAt = await db.transition.groupBy({
        by: ["taskId"],
        where: { taskId: { in: toResume }, actor: failoverAgent.identity, createdAt: { gt: new Date(lossAt) } },
        _min: { createdAt: true },
      });
      expect(resumedAt.map((r) => r.taskId).sort(), "a task no standby worker wrote to").toEqual([...toResume].sort());
      const everyResumed = Math.max(lossAt, ...resumedAt.map((r) => r._min.createdAt!.getTime()));
      console.log(
        [
          `failover (seed ${SEED}, ${TASKS} tasks, ${WORKERS}×${CONCURRENCY} workers, ship lag ${SHIP_LAG_MS} ms; load ${loadavg()
            .map((l) => l.toFixed(2))
            .join(" ")} on ${availableParallelism()} cores):`,
          `  backup at ${backupAtRefunds} refunds: pg_dump ${dumped - backupStarted} ms, pg_restore ${restored - dumped} ms; ${shipped.ids.size} checkpoints shipped after it (mean age when shipped ${mean(shipped.ages)} ms); loss at ${secondWaveFrom + lossAfterSecondWaveRefunds} refunds (${refundsAtLoss} when the primary was dropped)`,
          `  recovery point: ${point.committed} transitions committed on the primary, ${point.fromBackup} in the backup, ${point.fromCheckpoints} recovered by shipped checkpoints, ${point.lost} lost in ${point.tasksLosing} of ${TASKS} tasks: ${point.notShipped} never shipped (the oldest committed ${point.windowMs} ms before the primary's last commit), ${point.notApplied} shipped but refused by the restore`,
          `  lost per task: ${JSON.stringify(point.perTask)}`,
          `  recovery time: first accepted write on the standby ${firstWrite ? firstWrite.createdAt.getTime() - lossAt : "-"} ms, takeover (roll-forward of every task) ${tookOver - lossAt} ms, every task resumed (${toResume.length} needed a worker) ${everyResumed - lossAt} ms, first round of workers done ${resumed - lossAt} ms, every task at rest ${settled - lossAt} ms (${rounds} reconcile rounds)`,
          `  takeover: settled first ${JSON.stringify(
            count(
              [...takeover.values()].flatMap((t) => t.settled),
              (s) => `${s.from}→${s.action}`,
            ),
          )}; roll-forward ${JSON.stringify(count([...takeover.values()], (t) => (t.rollForward.kind === "refused" ? `refused:${t.rollForward.code}` : t.rollForward.kind)))}; lost calls ${JSON.stringify(count(lostCalls, (c) => c.kind))}; released lost intents ${lines.filter((l) => l.lost && "releasedLostIntent" in l.lost && l.lost.releasedLostIntent).length}`,
          `  reconciler ${JSON.stringify(reconciled)}; final ${JSON.stringify(count(tasks, (t) => t.status))}; refunds at the provider ${refunds.length}; audit: ${audit.entries} entries in ${audit.streams} chains verified; verifier: ${verified.checked} settled effects looked up, ${verified.raised.length} alerts (lost effects naming the primary's execution)`,
        ].join("\n"),
      );
    },
  );
});

const providerRefunds = () => refundsAt(sandbox.url);

/** Until the provider holds `n` refunds; a primary worker's crash, or all of them ending first, fails the test. */
function waitForRefunds(n: number, workers: RefundWorker[]): Promise<void> {
  return waitUntil(async () => (await providerRefunds()).length >= n, workers, `the provider holding ${n} refunds`);
}

// ── The shipper, the databases ───────────────────────────────────────────

/**
 * The log shipper: every checkpoint committed on the primary, exported
 * verbatim and imported (verified) on the standby once it is SHIP_LAG_MS
 * old. Tracked by id, not by a created_at watermark: created_at is taken
 * before the commit, so a later row can become visible after an earlier
 * watermark had passed its time.
 */
function startShipper(from: Db, to: Db, alreadyThere: Set<string>) {
  const ids = new Set<string>();
  const ages: number[] = [];
  const errors: string[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const due = await from.checkpoint.findMany({
        where: { createdAt: { lte: new Date(Date.now() - SHIP_LAG_MS) } },
        select: { id: true, createdAt: true },
      });
      for (const c of due) {
        if (alreadyThere.has(c.id) || ids.has(c.id)) continue;
        try {
          await importCheckpoint(to, await exportCheckpoint(from, c.id));
          ids.add(c.id);
          ages.push(Date.now() - c.createdAt.getTime());
        } catch (error) {
          errors.push(`${c.id}: ${error instanceof Error ? error.message : String(error)}`);
          alreadyThere.add(c.id);
        }
      }
      await sleep(SHIP_EVERY_MS);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { ids, ages, errors };
    },
  };
}

interface Committed {
  /** Per task, the primary's commit time of each version. */
  versions: Map<string, Map<number, Date>>;
}

/**
 * Per task: the primary's last version, the version the backup held, the
 * newest shipped checkpoint's, and the one the standby recovered (the
 * roll-forward's checkpoint, else the backup's). Lost = committed on the
 * primary above the recovered version: never shipped (above the shipped
 * checkpoint; their commit times give the recovery point in time), or
 * shipped but not applied (the restore refused it).
 */
function recoveryPoint(truth: Committed, takeover: Map<string, TakeoverReport>) {
  const totals = { committed: 0, fromBackup: 0, fromCheckpoints: 0, lost: 0, notShipped: 0, notApplied: 0 };
  let oldestNotShipped: number | undefined;
  let newest = 0;
  const perTask: Record<string, number> = {};
  for (const [taskId, { backupVersion, rollForward }] of takeover) {
    const times = truth.versions.get(taskId) ?? new Map<number, Date>();
    const last = Math.max(0, ...times.keys());
    const shipped = rollForward.kind === "up_to_date" ? backupVersion : rollForward.checkpoint.stateVersion;
    const recovered = rollForward.kind === "rolled_forward" ? shipped : backupVersion;
    totals.committed += last;
    totals.fromBackup += backupVersion;
    totals.fromCheckpoints += recovered - backupVersion;
    totals.lost += last - recovered;
    totals.notShipped += last - shipped;
    totals.notApplied += shipped - recovered;
    if (last > recovered) perTask[taskId.replace(/^refund-fo\d+-/, "#")] = last - recovered;
    for (const [version, at] of times) {
      newest = Math.max(newest, at.getTime());
      if (version > shipped) oldestNotShipped = Math.min(oldestNotShipped ?? Infinity, at.getTime());
    }
  }
  return {
    ...totals,
    tasksLosing: Object.keys(perTask).length,
    perTask,
    windowMs: oldestNotShipped === undefined ? 0 : newest - oldestNotShipped,
  };
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function mean(values: number[]): number {
  return values.length ? Math.round(values.reduce((a, b) => a + b, 0) / values.length) : 0;
}
