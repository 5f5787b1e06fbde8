import { recordReconcilePass } from "@/lib/config/metrics";
import { inSpan } from "@/lib/config/tracing";
import { loadNewWorkflowDefinitions } from "@/lib/stores/workflow-registry";
import { dbFor, getPlatformDb, type Db } from "@/lib/db/client";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";
import { listTenants } from "@/lib/stores/tenants";
import { foldTaskCountChanges } from "@/lib/stores/task-counts";
import { getEnv, getOutboxSecret } from "@/lib/config/env";
import { isAppError } from "@/lib/core/errors";
import { childLogger, lineLogger, type Logger } from "@/lib/config/log";
import { getConnectors, type ConnectorDeps } from "@/lib/connectors/effects";
import { createWebhookDeliverer, dispatchOutbox, type Deliver } from "@/lib/stores/messaging";
import { reconcileDue, verifySettled } from "@/lib/use-cases/reconciliation/reconciler";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { MONITOR_LEASE_MS } from "@/lib/use-cases/monitor/monitor-runs";
import { scheduledRetention, type RetentionSchedule } from "@/lib/use-cases/audit/audit-retention";
import { scheduledTaskRetention, type TaskRetentionSchedule } from "@/lib/use-cases/retention/apply-retention-policy";
import { pruneConsoleSessions } from "@/lib/stores/console-sessions";
import { pruneSignInThrottles } from "@/lib/stores/sign-in-throttles";
import { addressThrottle, usernameThrottle } from "@/lib/model/auth/sign-in-throttle";

/**
 * The server's background work, one tick at a time: reconcile what is due,
 * deliver the outbox, and now and then verify settled executions against the
 * provider. A tick starts `intervalMs` after the previous one ended, so ticks
 * never overlap, however slow a provider is. Every step is safe to run in
 * several processes at once, each by its own means: CAS for corrections (a
 * reconciler that loses the race writes nothing), SKIP LOCKED claims for the
 * outbox, an advisory lock and the last pass's start for the invariant
 * monitor (one pass per interval per tenant, whichever server runs it),
 * fingerprints under an advisory lock for alerts, locked rows for retention,
 * SKIP LOCKED batches for folding the task counts' changes. So one loop per
 * server instance needs no other coordination;
 * docs/scale-out.md says what each step costs when N servers run it, and
 * tests/live/scale-out.test.ts runs three of them behind HAProxy.
 *
 * Each tick also folds the task counts' changes into their counters
 * (lib/stores/task-counts.ts), so that reading the counts stays short.
 * Now and then (housekeepingIntervalMs) it also deletes rows that no longer
 * stand for anything: console sessions long past their expiry, and sign-in
 * throttle counters whose window has passed.
 *
 * It logs what changed at info (executions settled or corrected, messages
 * delivered, retention runs, rows pruned), alerts it raised at warn and failures at
 * error; what each tick looked at only at debug. An idle server, whose
 * verifier asks the provider about every recently settled execution each
 * minute, prints nothing.
 */

/** The background steps that call providers, and so are worth a trace each: the rest would only add an empty span per tick. */
const tracedSteps: ReadonlySet<string> = new Set(["reconcile", "verify"]);

export interface BackgroundLoopOptions {
  /** Outbox delivery; without one, messages wait in the outbox for a subscriber. */
  deliver?: Deliver;
  /** verifySettled asks the provider about every recently settled execution: every this many ticks (default 12). */
  verifyEvery?: number;
  lookupTimeoutMs?: number;
  /** Where the loop logs; childLogger("background") when omitted. */
  logger?: Logger;
  /** Instead of `logger`: the same records as plain lines, only those at or above VERITY_LOG_LEVEL (tests collect them). */
  log?: (line: string) => void;
  /** The invariant monitor's pass (lib/use-cases/monitor/run-monitor-pass.ts) at most this often; absent or 0: never. */
  monitorIntervalMs?: number;
  /** Audit retention (VERITY_AUDIT_RETENTION_DAYS); without one, audit entries are kept forever. */
  retention?: RetentionSchedule;
  /** Task-data retention: the tenant's policy, else VERITY_TASK_RETENTION_DAYS; without either, finished tasks' data is kept forever. */
  taskRetention?: TaskRetentionSchedule;
  /** Pruning of spent rows (console sessions, sign-in throttles) at most this often; default 10 minutes, the first tick included. */
  housekeepingIntervalMs?: number;
}

/**
 * A console session row is kept this long past its expiry, then deleted: long
 * enough to answer "which sessions did this person have last month" from the
 * table while anyone still asks; the audit log keeps every sign-in (with its
 * session id) and sign-out for as long as audit retention does.
 */
export const CONSOLE_SESSION_ROW_RETENTION_MS = 30 * 24 * 60 * 60_000;

export interface TickReport {
  reconciled: number;
  conflicts: number;
  alertsRaised: number;
  delivered: number;
  errors: number;
  /** Violations the invariant monitor saw in this tick's pass (0 when no pass was due). */
  monitorViolations?: number;
}

export interface BackgroundLoop {
  /** Runs a tick now (or waits for the one in progress): tests and scripts. */
  runOnce(): Promise<TickReport>;
  /** No tick starts after this; resolves when the one in progress has finished. */
  stop(): Promise<void>;
}

export function startBackgroundLoop(
  db: Db,
  deps: ConnectorDeps,
  intervalMs: number,
  options: BackgroundLoopOptions = {},
): BackgroundLoop {
  const log = options.logger ?? (options.log ? lineLogger(options.log) : childLogger("background"));
  const verifyEvery = Math.max(1, options.verifyEvery ?? 12);
  let ticks = 0;
  let nextMonitorAt = 0;
  let lastHousekeepingAt = 0;
  const housekeepingEvery = options.housekeepingIntervalMs ?? 10 * 60_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<TickReport> | null = null;
  const retain = options.retention ? scheduledRetention(options.retention) : null;
  const retainTasks = options.taskRetention ? scheduledTaskRetention(options.taskRetention) : null;

  async function step<T>(name: string, report: TickReport, run: () => Promise<T>): Promise<T | undefined> {
    try {
      // The steps that ask providers are traces of their own (lib/config/tracing.ts): a pass's lookups under it.
      return tracedSteps.has(name) ? await inSpan(`background ${name}`, {}, run) : await run();
    } catch (error) {
      report.errors++;
      // An AppError is an expected refusal (its code says it all); anything else keeps its stack.
      if (isAppError(error)) log.error({ code: error.code }, `${name} failed: ${error.code}: ${error.message}`);
      else log.error({ err: error }, `${name} failed`);
      return undefined;
    }
  }

  async function tick(): Promise<TickReport> {
    const verify = ticks++ % verifyEvery === 0;
    const report: TickReport = { reconciled: 0, conflicts: 0, alertsRaised: 0, delivered: 0, errors: 0 };
    // What this tick looked at, for the one debug line at its end.
    const looked: Record<string, number> = {};
    // First: the passes below read task rows themselves and their rules need
    // each task's definition, including one another process just published.
    await step("workflows", report, () => loadNewWorkflowDefinitions(db));
    const reconciled = await step("reconcile", report, () =>
      reconcileDue(db, deps, { lookupTimeoutMs: options.lookupTimeoutMs }),
    );
    recordReconcilePass(reconciled ? "ok" : "error");
    if (reconciled) {
      looked.reconcile_examined = reconciled.examined;
      looked.reconcile_not_due = reconciled.counts.not_due;
      report.reconciled =
        reconciled.examined - reconciled.conflicts - reconciled.errors.length - reconciled.counts.not_due;
      report.conflicts = reconciled.conflicts;
      report.errors += reconciled.errors.length;
      for (const e of reconciled.errors)
        log.warn({ execution: e.executionId, code: e.code }, `reconciling failed: ${e.message}`);
      const { not_due: _, ...counts } = reconciled.counts;
      if (report.reconciled > 0) {
        const settled = reconciled.results.filter((r) => r.action !== "not_due").map((r) => r.executionId);
        log.info(
          { executions: settled },
          `reconciled ${report.reconciled} execution(s): ${Object.entries(counts)
            .filter(([, n]) => n > 0)
            .map(([k, n]) => `${n} ${k}`)
            .join(", ")}`,
        );
      }
    }
    if (verify) {
      const verified = await step("verify", report, () =>
        verifySettled(db, deps, { lookupTimeoutMs: options.lookupTimeoutMs }),
      );
      if (verified) {
        looked.verify_checked = verified.checked;
        looked.verify_unknown = verified.unknown;
        looked.verify_tasks = verified.tasksChecked;
        report.alertsRaised = verified.raised.length;
        for (const c of verified.corrected)
          log.info(
            { execution: c.executionId, task: c.taskId },
            "corrected a recorded failure to RECONCILED_SUCCEEDED: the provider holds its effect",
          );
        for (const a of verified.raised)
          log.warn(
            { alert: a.alertId, task: a.taskId, execution: a.executionId ?? undefined },
            `divergence ${a.kind} raised`,
          );
      }
    }
    const monitorEvery = options.monitorIntervalMs ?? 0;
    if (monitorEvery > 0 && Date.now() >= nextMonitorAt) {
      const askedAt = Date.now();
      // everyMs: another server's pass within the interval counts as this one's.
      const pass = await step("monitor", report, () => runMonitorPass(db, {}, { everyMs: monitorEvery }));
      // Refused (another server's pass is running or was recent): asked again sooner than a whole
      // interval, so that when that server dies mid-pass its lapsed claim (MONITOR_LEASE_MS) is
      // taken over within about one interval, whatever the phase of the servers' loops.
      nextMonitorAt =
        askedAt + (pass && pass.run === null ? Math.min(monitorEvery, MONITOR_LEASE_MS / 2) : monitorEvery);
      if (pass) {
        looked.monitor_examined = Object.values(pass.checks).reduce((n, c) => n + (c?.examined ?? 0), 0);
        looked.monitor_violations = pass.violations;
        report.monitorViolations = pass.violations;
        const raised = pass.alerts.filter((a) => a.created);
        report.alertsRaised += raised.length;
        for (const a of raised) log.warn({ alert: a.id, task: a.taskId || undefined }, `monitor raised ${a.kind}`);
        if (pass.run?.error) log.error(`a monitor check failed: ${pass.run.error}`);
      }
    }
    const deliver = options.deliver;
    if (deliver) {
      const dispatched = await step("outbox", report, () => dispatchOutbox(db, deliver));
      if (dispatched) {
        looked.outbox_claimed = dispatched.claimed;
        report.delivered = dispatched.delivered;
        if (dispatched.delivered > 0) log.info(`delivered ${dispatched.delivered} outbox message(s)`);
        if (dispatched.failed > 0)
          log.warn(
            `${dispatched.failed} outbox message(s) not delivered, retried later: ${dispatched.errors[0]?.error ?? ""}`,
          );
      }
    }
    // Every tick: the counts' reads sum the changes not folded yet, so the fold keeps them short.
    const folded = await step("task counts", report, () => foldTaskCountChanges(db));
    if (folded) looked.task_count_changes_folded = folded;
    if (Date.now() - lastHousekeepingAt >= housekeepingEvery) {
      lastHousekeepingAt = Date.now();
      await step("housekeeping", report, async () => {
        const sessions = await pruneConsoleSessions(db, new Date(Date.now() - CONSOLE_SESSION_ROW_RETENTION_MS));
        if (sessions > 0) log.info(`pruned ${sessions} console session row(s) expired over 30 days ago`);
        const throttleWindowMs = Math.max(usernameThrottle.windowMs, addressThrottle.windowMs);
        const throttles = await pruneSignInThrottles(db, new Date(), throttleWindowMs);
        if (throttles > 0) log.info(`pruned ${throttles} sign-in throttle counter(s) whose window had passed`);
      });
    }
    if (retainTasks) {
      // Before audit retention, whose prefix cuts of the shared streams then see this run's entry.
      const runs = await step("task retention", report, () => retainTasks(db));
      for (const run of runs ?? []) {
        const rows = Object.values(run.rows).reduce((n, c) => n + c, 0);
        log.info(
          `task retention (${run.policy ? "the tenant's policy" : `${run.olderThanDays} days`}) deleted ${run.tasks.length} finished task(s) from every store: ${rows} row(s), ${run.streamsCut} audit stream(s) cut to an anchor${run.heldTasks.length ? `; ${run.heldTasks.length} held` : ""} (entry ${run.entry?.id})`,
        );
      }
    }
    if (retain) {
      // Last: a large cut is a long transaction, and the steps above are the urgent ones.
      const retained = await step("audit retention", report, () => retain(db));
      if (retained?.entry) {
        const deleted = retained.cuts.reduce((n, c) => n + c.deleted, 0);
        log.info(
          `audit retention (${options.retention?.olderThanDays} days) deleted ${deleted} entries from ${retained.cuts.length} stream(s)${retained.heldStreams.length ? `; ${retained.heldStreams.length} held` : ""}`,
        );
      }
    }
    log.debug({ ...looked, errors: report.errors }, "tick");
    return report;
  }

  function runOnce(): Promise<TickReport> {
    inFlight ??= tick().finally(() => {
      inFlight = null;
    });
    return inFlight;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      void runOnce().finally(schedule);
    }, intervalMs);
    // The loop never keeps a process alive on its own (a script, a test).
    timer.unref();
  }

  schedule();
  return {
    runOnce,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await inFlight?.catch(() => undefined);
    },
  };
}

const globalForLoop = globalThis as unknown as { verityBackgroundLoop?: BackgroundLoop };

/**
 * The server process's background work (instrumentation.ts), once per
 * process even if the hook runs again (a dev server reloading): one loop per
 * active tenant, each on that tenant's client, so every pass (reconcile,
 * verify, outbox, monitor, retention) sees and changes one tenant's rows
 * only. The register is read again every minute: a tenant created gets its
 * loop, a suspended one's loop stops after its tick in progress. Off when
 * VERITY_RECONCILE_INTERVAL_MS is 0.
 */
export function startServerBackgroundLoop(): BackgroundLoop | null {
  const env = getEnv();
  if (env.VERITY_RECONCILE_INTERVAL_MS <= 0) return null;
  if (globalForLoop.verityBackgroundLoop) return globalForLoop.verityBackgroundLoop;
  const url = env.VERITY_OUTBOX_WEBHOOK_URL;
  const retention = env.VERITY_AUDIT_RETENTION_DAYS
    ? { olderThanDays: env.VERITY_AUDIT_RETENTION_DAYS, everyMs: env.VERITY_AUDIT_RETENTION_INTERVAL_MS }
    : undefined;
  // Always scheduled: a tenant's own policy applies even when the deployment sets no default term.
  const taskRetention = {
    olderThanDays: env.VERITY_TASK_RETENTION_DAYS,
    everyMs: env.VERITY_AUDIT_RETENTION_INTERVAL_MS,
  };
  const log = childLogger("background");
  const loops = new Map<string, BackgroundLoop>();
  const startFor = (tenantId: string) =>
    startBackgroundLoop(dbFor({ tenantId }), getConnectors(), env.VERITY_RECONCILE_INTERVAL_MS, {
      deliver: url ? createWebhookDeliverer(url, getOutboxSecret()) : undefined,
      retention,
      taskRetention,
      monitorIntervalMs: env.VERITY_MONITOR_INTERVAL_MS,
      logger: log.child({ tenant: tenantId }),
    });
  let stopped = false;
  async function followRegister(): Promise<void> {
    if (stopped) return;
    try {
      const active = new Set(
        (await listTenants(getPlatformDb())).filter((t) => t.status === "active").map((t) => t.id),
      );
      for (const id of active) if (!loops.has(id)) loops.set(id, startFor(id));
      for (const [id, loop] of loops)
        if (!active.has(id)) {
          loops.delete(id);
          void loop.stop();
          log.info({ tenant: id }, "tenant no longer active: its background loop stopped");
        }
    } catch (error) {
      // The first tenant's loop runs even when the register cannot be read (a database not up yet).
      if (!loops.has(DEFAULT_TENANT_ID)) loops.set(DEFAULT_TENANT_ID, startFor(DEFAULT_TENANT_ID));
      log.error({ err: error }, "could not read the tenant register; trying again in a minute");
    }
  }
  void followRegister();
  const registerTimer = setInterval(() => void followRegister(), 60_000);
  registerTimer.unref();
  const loop: BackgroundLoop = {
    runOnce: async () => {
      const reports = await Promise.all([...loops.values()].map((l) => l.runOnce()));
      return reports.reduce(
        (sum, r) => ({
          reconciled: sum.reconciled + r.reconciled,
          conflicts: sum.conflicts + r.conflicts,
          alertsRaised: sum.alertsRaised + r.alertsRaised,
          delivered: sum.delivered + r.delivered,
          errors: sum.errors + r.errors,
        }),
        { reconciled: 0, conflicts: 0, alertsRaised: 0, delivered: 0, errors: 0 },
      );
    },
    stop: async () => {
      stopped = true;
      clearInterval(registerTimer);
      await Promise.all([...loops.values()].map((l) => l.stop()));
    },
  };
  globalForLoop.verityBackgroundLoop = loop;
  log.info(
    `background loop every ${env.VERITY_RECONCILE_INTERVAL_MS} ms per active tenant (reconcile, verify, outbox${url ? "" : ": no subscriber configured, messages wait"}${env.VERITY_MONITOR_INTERVAL_MS > 0 ? `; invariant monitor every ${env.VERITY_MONITOR_INTERVAL_MS} ms` : ""})`,
  );
  return loop;
}
