/**
 * Failover on PostgreSQL's own streaming replication (issue 16, item 5;
 * docs/recovery.md, "Streaming replication"), with real clusters and real
 * processes on this machine, in both modes:
 *
 *   primary   a cluster of the test's own (initdb, tests/helpers/postgres-cluster.ts),
 *             migrated; refund worker processes (the demo agent) drive N
 *             tasks against the sandbox provider over HTTP
 *   standby   pg_basebackup of the primary, streaming: asynchronous, or
 *             synchronous (synchronous_standby_names: a commit returns once
 *             the standby has flushed it)
 *   loss      at a seeded count of refunds, the primary's server and its
 *             workers are SIGKILLed together; requests already at the
 *             provider still land
 *   takeover  the standby promoted (pg_ctl promote); on it, the takeover
 *             procedure of today (lib/use-cases/failover/failover.ts) settles
 *             what was unsettled by provider lookup and rolls forward from
 *             checkpoints where there is anything to roll; new workers record
 *             the calls lost with the primary and resume; the reconciler
 *             settles unknown outcomes between rounds
 *   truth     afterwards the killed primary is started again (crash
 *             recovery from its own WAL): what it had committed is the truth
 *             the standby is measured against
 *
 * Asserted in both modes: zero duplicate refunds at the provider; every task
 * COMPLETED or waiting in the review queue; gapless logs and unbroken audit
 * chains on the promoted standby. Synchronous: nothing the primary committed
 * is missing on the standby. Measured and printed: the recovery point
 * (transitions lost, and the span of commit time they cover) and the recovery
 * time (loss to promoted, to the first accepted write, to every task at rest).
 */
import { availableParallelism, loadavg } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { forgetUnwrappedDataKeys } from "@/lib/stores/data-keys";
import { takeOverTask, type TakeoverReport } from "@/lib/use-cases/failover/failover";
import { reconcileDue } from "@/lib/use-cases/reconciliation/reconciler";
import type { Actor } from "@/lib/model/actor";
import { seededRandom } from "@/lib/core/seeded-random";
import { orderOf, taskIdOf } from "@/programs/agent/order";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";
import {
  releaseSynchronousStandby,
  requireSynchronousStandby,
  startPrimaryCluster,
  startStandbyCluster,
  type Cluster,
} from "@/tests/helpers/postgres-cluster";
import { createRefundTask, engineClientOf } from "./failover-agent";
import {
  buildRefundWorker,
  committedVersions,
  count,
  expectGaplessTransitionLogs,
  notAtRest,
  partition,
  providerRefunds,
  runRefundWorkers,
  startRefundWorker,
  waitUntil,
  type RefundWorkerOptions,
} from "./failover-harness";

const SEED = Number(process.env.FAILOVER_SEED ?? 5_151);
const TASKS = 10;
const WORKERS = 2;
const CONCURRENCY = 4;
const LATENCIES = ["latency=30", "latency=120"];
const DATABASE = "verity";
const engineer: Actor = { identity: "spiffe://verity.test/user/replication-engineer", kind: "user" };

let script: string;
let sandbox: Sandbox;
const open: Array<{ close(): Promise<void> }> = [];
const clusters: Cluster[] = [];

beforeAll(async () => {
  script = buildRefundWorker();
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  for (const h of open) await h.close().catch(() => undefined);
  for (const c of clusters) await c.remove().catch(() => undefined);
  await sandbox?.close();
});

function handleOn(cluster: Cluster, poolSize = 4): DatabaseHandle {
  const handle = openDatabase({ kind: "postgres", url: cluster.url(DATABASE) }, { poolSize });
  open.push(handle);
  return handle;
}

describe.each(
  (process.env.REPL_MODES ?? "asynchronous,synchronous").split(",") as Array<"asynchronous" | "synchronous">,
)("streaming replication, %s: primary killed under load", (mode) => {
  it(
    `${TASKS} refunds; the standby promoted, takes over, nothing doubled, nobody stuck${mode === "synchronous" ? ", nothing lost" : ""}`,
    { timeout: 240_000 },
    async () => {
      const random = seededRandom(SEED + (mode === "synchronous" ? 1 : 0));
      const lossAtRefunds = 4 + Math.floor(random() * 5);
      const sandboxRefundsBefore = (await providerRefunds(sandbox.url)).length;
      // A new database for this process: no data key of the last one may seal a value here.
      forgetUnwrappedDataKeys();
      const began = Date.now();
      const marks: Record<string, number> = {};
      const mark = (what: string) => (marks[what] = Date.now() - began);

      // ── The primary and its standby ────────────────────────────────────
      const primary = await startPrimaryCluster();
      clusters.push(primary);
      mark("initdb");
      await primary.query(`CREATE DATABASE ${DATABASE}`);
      const primaryHandle = handleOn(primary);
      await migrateDatabase(primaryHandle.adapterFactory);
      await registerBuiltInWorkflows(primaryHandle.db);
      await registerBuiltInTools(primaryHandle.db);
      mark("migrated");
      const standby = await startStandbyCluster(primary, "standby1");
      clusters.push(standby);
      if (mode === "synchronous") await requireSynchronousStandby(primary, "standby1");
      mark("standby");

      // ── Traffic on the primary ─────────────────────────────────────────
      const orders = Array.from({ length: TASKS }, (_, i) =>
        orderOf(`rf${SEED}-${mode.slice(0, 1)}-${i + 1}`, 1_000 + 41 * i, "usd"),
      );
      const taskIds = orders.map(taskIdOf);
      const client = engineClientOf(primaryHandle.db, sandbox.url);
      for (const [i, order] of orders.entries()) await createRefundTask(client, order, taskIds[i]!);
      const workerOptions: RefundWorkerOptions = {
        script,
        sandboxUrl: sandbox.url,
        seed: SEED,
        faults: LATENCIES,
        concurrency: CONCURRENCY,
        workers: WORKERS,
      };
      const workers = partition(orders, WORKERS).map((slice) =>
        startRefundWorker(workerOptions, primary.url(DATABASE), "run", slice),
      );
      const ours = async () =>
        (await providerRefunds(sandbox.url)).filter((r) => taskIds.includes(r.metadata.task_id ?? ""));
      await waitUntil(
        async () => (await ours()).length >= lossAtRefunds,
        workers,
        `the provider holding ${lossAtRefunds} refunds`,
      ).catch((error: unknown) => {
        throw new Error(
          `${String(error)}; the workers said: ${JSON.stringify(workers.flatMap((w) => w.lines).slice(0, 3))}`,
        );
      });

      // ── Loss: the primary's server and its workers, at once ────────────
      mark("loss");
      const lossAt = Date.now();
      await Promise.all([primary.kill(), ...workers.map(async (w) => w.child.kill("SIGKILL"))]);
      await Promise.all(workers.map((w) => w.exited));
      await primaryHandle.close().catch(() => undefined);

      // ── Promotion and takeover on the standby ──────────────────────────
      await standby.promote();
      const promotedAt = Date.now();
      const standbyHandle = handleOn(standby, 6);
      const db = standbyHandle.db;
      const atPromotion = await committedVersions(db);
      const deps = {
        payments: new SandboxPaymentConnector({ baseUrl: sandbox.url, timeoutMs: 3_000 }),
        crm: new SandboxCrmConnector({ baseUrl: sandbox.url, timeoutMs: 3_000 }),
      };
      const takeover = new Map<string, TakeoverReport>();
      for (const id of taskIds) takeover.set(id, await takeOverTask(db, id, engineer, deps));
      const tookOver = Date.now();
      const ordersOf = (ids: string[]) => orders.filter((o) => ids.includes(taskIdOf(o)));
      const lines = await runRefundWorkers(
        workerOptions,
        standby.url(DATABASE),
        "resume",
        ordersOf(await notAtRest(db, taskIds)),
      );
      let rounds = 0;
      for (
        let unsettled = await notAtRest(db, taskIds);
        unsettled.length > 0 && rounds < 4;
        unsettled = await notAtRest(db, taskIds)
      ) {
        rounds++;
        const summary = await reconcileDue(db, deps, { sentTimeoutMs: 0, limit: 500 });
        expect(summary.errors, "the reconciler failed").toEqual([]);
        lines.push(...(await runRefundWorkers(workerOptions, standby.url(DATABASE), "resume", ordersOf(unsettled))));
      }
      const settled = Date.now();
      const firstWrite = await db.transition.findFirst({
        // On the promoted standby: a commit the primary streamed between the loss time and the kill is not one.
        where: { createdAt: { gte: new Date(promotedAt) } },
        orderBy: { createdAt: "asc" },
      });

      // ── The truth: the killed primary, recovered from its own WAL ──────
      await primary.start();
      await releaseSynchronousStandby(primary);
      const truthHandle = handleOn(primary, 1);
      const truth = await committedVersions(truthHandle.db);
      await truthHandle.close();

      // ── Assertions ─────────────────────────────────────────────────────
      expect(
        lines
          .filter((l) => (l.lost && "error" in l.lost) || l.report.outcome === "error")
          .map((l) => ({ task: l.task, lost: l.lost, report: l.report.detail })),
      ).toEqual([]);
      // 1. Zero duplicate refunds, from the provider's own records.
      const refunds = await ours();
      expect(
        taskIds.filter((id) => refunds.filter((r) => r.metadata.task_id === id).length > 1),
        "tasks refunded more than once",
      ).toEqual([]);
      expect(refunds.length).toBeLessThanOrEqual(TASKS);
      expect((await providerRefunds(sandbox.url)).length - sandboxRefundsBefore).toBe(refunds.length);
      // 2. Nobody stuck or failed.
      expect(await notAtRest(db, taskIds), "tasks not at rest on the standby").toEqual([]);
      const tasks = await db.task.findMany({ where: { id: { in: taskIds } } });
      expect(
        tasks.filter((t) => !["COMPLETED", "WAITING_FOR_HUMAN"].includes(t.status)).map((t) => `${t.id} ${t.status}`),
      ).toEqual([]);
      // 3. Gapless logs and unbroken audit chains on the promoted standby.
      await expectGaplessTransitionLogs(db, tasks);
      const audit = await verifyAuditChains(db);
      expect(audit.breaks, "audit chains on the standby").toEqual([]);
      // 4. The recovery point: what the primary committed that the standby did not have at promotion.
      let committed = 0;
      let lost = 0;
      let lastCommit = 0;
      let oldestLost: number | undefined;
      for (const [taskId, versions] of truth) {
        for (const [version, committedAt] of versions) {
          const at = committedAt.getTime();
          committed++;
          lastCommit = Math.max(lastCommit, at);
          if (!atPromotion.get(taskId)?.has(version)) {
            lost++;
            oldestLost = Math.min(oldestLost ?? Infinity, at);
          }
        }
      }
      expect(committed).toBeGreaterThan(TASKS);
      if (mode === "synchronous") expect(lost, "a synchronous standby lost an acknowledged commit").toBe(0);

      console.log(
        [
          `replication failover, ${mode} (seed ${SEED}, ${TASKS} tasks, ${WORKERS}×${CONCURRENCY} workers; load ${loadavg()
            .map((l) => l.toFixed(2))
            .join(
              " ",
            )} on ${availableParallelism()} cores): loss at ${lossAtRefunds} refunds; set-up ${JSON.stringify(marks)} ms`,
          `  recovery point: ${committed} transitions committed on the primary, ${lost} missing on the standby at promotion${oldestLost === undefined ? "" : ` (committed in the last ${lastCommit - oldestLost} ms before the loss)`}`,
          `  recovery time: promoted ${promotedAt - lossAt} ms after the loss, first accepted write ${firstWrite ? firstWrite.createdAt.getTime() - lossAt : "-"} ms, takeover of every task ${tookOver - lossAt} ms, every task at rest ${settled - lossAt} ms (${rounds} reconcile rounds)`,
          `  takeover: settled ${JSON.stringify(
            count(
              [...takeover.values()].flatMap((t) => t.settled),
              (s) => `${s.from}→${s.action}`,
            ),
          )}; roll-forward ${JSON.stringify(count([...takeover.values()], (t) => t.rollForward.kind))}; final ${JSON.stringify(count(tasks, (t) => t.status))}; refunds at the provider ${refunds.length}`,
        ].join("\n"),
      );
    },
  );
});
