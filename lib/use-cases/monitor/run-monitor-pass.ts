import { countMonitorViolations } from "@/lib/config/metrics";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { getEnv } from "@/lib/config/env";
import type { Prisma } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { idempotencyWindowMs } from "@/lib/connectors/effects";
import {
  monitorChecks,
  type CheckReport,
  type MonitorCheck,
  type MonitorPassResult,
  type PassContext,
} from "@/lib/use-cases/monitor/monitor-pass-context";
import { CommitCursorSchema, emptyCommitCursor } from "@/lib/use-cases/monitor/read-committed-forward";
import { MONITOR_LEASE_MS } from "@/lib/use-cases/monitor/monitor-runs";
import { checkTaskStates } from "@/lib/use-cases/monitor/check-task-states";
import { checkSuccessEvidence } from "@/lib/use-cases/monitor/check-success-evidence";
import { checkUnknownOutcomes } from "@/lib/use-cases/monitor/check-unknown-outcomes";
import { checkWriteConflicts } from "@/lib/use-cases/monitor/check-write-conflicts";
import { checkCheckpointRestores } from "@/lib/use-cases/monitor/check-checkpoint-restores";
import { checkAuditChains } from "@/lib/use-cases/monitor/check-audit-chains";

/**
 * The continuous invariant monitor: one pass re-checks every invariant the
 * alerts centre knows over live data, a bounded amount of it, and raises an
 * alert (lib/use-cases/alerts/divergence.ts) for each violation. Tables whose rows
 * change (tasks, executions, audit streams) are walked in keyset batches
 * that wrap around, so every row is seen again every few passes; the
 * append-only sources (write_conflicts, checkpoint_restores) are read once,
 * forward from the cursor the previous pass saved, by a key no late commit
 * can fall behind (`readCommittedForward`). Each pass is one
 * `invariant_monitor_runs` row: what it checked, what it found, where it
 * stopped. Written only here.
 */

const keyCursor = z.object({ afterId: z.string().nullable() });
const CursorSchema = z.object({
  task_states: keyCursor.default({ afterId: null }),
  success_evidence: keyCursor.default({ afterId: null }),
  write_conflicts: CommitCursorSchema.default(emptyCommitCursor),
  checkpoint_restores: CommitCursorSchema.default(emptyCommitCursor),
  audit_chains: z.object({ afterStream: z.string().nullable() }).default({ afterStream: null }),
});
export type MonitorCursor = z.infer<typeof CursorSchema>;

export interface MonitorDeps {
  /** The provider's idempotency window of a tool (default: lib/connectors/effects.ts). */
  idempotencyWindowMs?: (tenantId: string, tool: string, version?: number | null) => number;
}

export interface MonitorOptions {
  now?: Date;
  /** Rows per check per pass; VERITY_MONITOR_BATCH by default. */
  batchSize?: number;
  /** Audit streams verified per pass (each read whole). */
  auditStreamsPerPass?: number;
  /** Only these checks (tests); every check by default. */
  only?: readonly MonitorCheck[];
  /**
   * Not due (no pass, `run: null`) while the tenant's last pass, by any
   * process, started less than this long ago: the background loop of every
   * server asks each interval, and one pass per interval answers them all
   * (docs/scale-out.md). A request from a person runs regardless.
   */
  everyMs?: number;
  /**
   * How long a pass's claim lasts unrenewed (MONITOR_LEASE_MS by default;
   * tests shorten it): renewed every quarter of it while the pass runs.
   */
  leaseMs?: number;
}

const MONITOR_LOCK_KEY = "verity:invariant-monitor";

export async function runMonitorPass(
  db: Db,
  deps: MonitorDeps = {},
  options: MonitorOptions = {},
): Promise<MonitorPassResult> {
  const now = options.now ?? new Date();
  const batch = options.batchSize ?? getEnv().VERITY_MONITOR_BATCH;
  const leaseMs = options.leaseMs ?? MONITOR_LEASE_MS;
  const claimed = await claimRun(db, options.everyMs ?? 0, leaseMs);
  if (!claimed) return { run: null, checks: {}, violations: 0, alerts: [] };
  const heartbeat = renewWhileRunning(db, claimed.id, leaseMs);
  try {
    return await runClaimedPass(db, deps, options, claimed, heartbeat, now, batch);
  } finally {
    heartbeat.stop();
  }
}

interface Heartbeat {
  /** Another server found this pass's claim expired and took the monitor over: stop, write nothing more. */
  readonly lost: boolean;
  stop(): void;
}

/**
 * Renews the pass's claim every quarter of the lease, on the database's
 * clock (servers' clocks may differ; the database's is the one every claim
 * compares with). A renewal that finds the run no longer open means another
 * server took it over (this process stalled past the lease): the pass
 * stops at its next check and its cursor is not saved, so no append-only
 * row is read by two passes' saved cursors.
 */
function renewWhileRunning(db: Db, runId: string, leaseMs: number): Heartbeat {
  let lost = false;
  let renewing: Promise<void> | null = null;
  const timer = setInterval(
    () => {
      if (renewing || lost) return;
      renewing =
        db.$executeRaw`UPDATE invariant_monitor_runs SET heartbeat_at = now() WHERE id = ${runId} AND finished_at IS NULL`
          .then((count) => {
            if (count === 0) lost = true;
          })
          // A failed renewal (a connection lost for a moment) is retried at the next beat; the lease has four.
          .catch(() => undefined)
          .finally(() => {
            renewing = null;
          });
    },
    Math.max(1, Math.floor(leaseMs / 4)),
  );
  timer.unref();
  return {
    get lost() {
      return lost;
    },
    stop: () => clearInterval(timer),
  };
}

async function runClaimedPass(
  db: Db,
  deps: MonitorDeps,
  options: MonitorOptions,
  claimed: { id: string; cursor: MonitorCursor },
  heartbeat: Heartbeat,
  now: Date,
  batch: number,
): Promise<MonitorPassResult> {
  const cursor = claimed.cursor;
  const result: MonitorPassResult = { run: null, checks: {}, violations: 0, alerts: [] };
  const ctx: PassContext = {
    db,
    now,
    batch,
    windowOf: deps.idempotencyWindowMs ?? idempotencyWindowMs,
    auditStreams: options.auditStreamsPerPass ?? Math.max(1, Math.floor(batch / 10)),
    result,
  };
  const runners: Record<MonitorCheck, (report: CheckReport) => Promise<void>> = {
    task_states: async (r) => {
      cursor.task_states = await checkTaskStates(ctx, r, cursor.task_states);
    },
    success_evidence: async (r) => {
      cursor.success_evidence = await checkSuccessEvidence(ctx, r, cursor.success_evidence);
    },
    unknown_outcomes: (r) => checkUnknownOutcomes(ctx, r),
    write_conflicts: async (r) => {
      cursor.write_conflicts = await checkWriteConflicts(ctx, r, cursor.write_conflicts);
    },
    checkpoint_restores: async (r) => {
      cursor.checkpoint_restores = await checkCheckpointRestores(ctx, r, cursor.checkpoint_restores);
    },
    audit_chains: async (r) => {
      cursor.audit_chains = await checkAuditChains(ctx, r, cursor.audit_chains);
    },
  };
  const errors: string[] = [];
  for (const check of monitorChecks) {
    if (options.only && !options.only.includes(check)) continue;
    if (heartbeat.lost) break;
    const report: CheckReport = { examined: 0, violations: 0, raised: 0, counted: 0 };
    result.checks[check] = report;
    try {
      await runners[check](report);
    } catch (error) {
      // One failing check must not stop the others: its cursor stays where it was, the next pass retries it.
      report.error = (error instanceof Error ? error.message : String(error)).slice(0, 500);
      errors.push(`${check}: ${report.error}`);
    }
    result.violations += report.violations;
    countMonitorViolations(check, report.violations);
  }
  // Only while still this pass's: a pass taken over leaves the row as the taker closed it.
  await db.invariantMonitorRun.updateMany({
    where: { id: claimed.id, finishedAt: null },
    data: {
      finishedAt: new Date(),
      checks: result.checks as unknown as Prisma.InputJsonValue,
      violations: result.violations,
      cursor: cursor as unknown as Prisma.InputJsonValue,
      error: errors.length > 0 ? errors.join("; ").slice(0, 2000) : null,
    },
  });
  result.run = await db.invariantMonitorRun.findUnique({ where: { id: claimed.id } });
  return result;
}

/**
 * Starts a run unless another process's run of this tenant is in progress
 * (its claim renewed within `leaseMs`) or (everyMs) one started within the
 * interval, and reads the cursor the tenant's last finished run left. A run
 * whose claim lapsed is closed first as abandoned: it keeps the cursor it
 * started from, which is where the new run goes on. Serialized by a transaction-scoped
 * advisory lock, so two monitors of one tenant never both start: an
 * append-only row is read by one pass, not counted twice, and N servers
 * make one pass per interval, not N.
 * The lock is the tenant's own (its key names the connection's tenant):
 * each tenant's loop runs its own pass, and one tenant's claim never waits
 * for another's.
 */
async function claimRun(
  db: Db,
  everyMs: number,
  leaseMs: number,
): Promise<{ id: string; cursor: MonitorCursor } | null> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${MONITOR_LOCK_KEY}::text || ':' || coalesce(verity_current_tenant(), ''), 0))`;
    // The database's clock, as the heartbeats are written: a server whose clock runs ahead takes nothing early.
    const running = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM invariant_monitor_runs
       WHERE finished_at IS NULL AND heartbeat_at > clock_timestamp() - make_interval(secs => ${leaseMs / 1000}::float8)
       LIMIT 1`;
    if (running.length > 0) return null;
    await tx.$executeRaw`
      UPDATE invariant_monitor_runs
         SET finished_at = clock_timestamp(),
             error = 'abandoned: its server stopped renewing its claim (killed or stalled); the next pass took over from its cursor'
       WHERE finished_at IS NULL`;
    if (everyMs > 0) {
      const recent = await tx.invariantMonitorRun.findFirst({
        where: { startedAt: { gt: new Date(Date.now() - everyMs) } },
        select: { id: true },
      });
      if (recent) return null;
    }
    const last = await tx.invariantMonitorRun.findFirst({
      where: { finishedAt: { not: null } },
      orderBy: [{ startedAt: "desc" }, { id: "desc" }],
    });
    const cursor = CursorSchema.parse(last?.cursor ?? {});
    const id = newId("mon");
    // The claim's own time, not the pass's `now` (a test may pass one in the future): runs never overlap on this clock.
    await tx.invariantMonitorRun.create({
      data: {
        id,
        startedAt: new Date(),
        checks: {},
        violations: 0,
        cursor: cursor as unknown as Prisma.InputJsonValue,
      },
    });
    return { id, cursor };
  });
}
