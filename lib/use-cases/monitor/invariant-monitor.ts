import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { getEnv } from "@/lib/config/env";
import { Prisma, type Execution, type InvariantMonitorRun } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { formatDuration } from "@/lib/core/format-duration";
import type { AuditBreak } from "@/lib/model/audit/audit-chain";
import { getAuditEntry, verifyAuditStreams } from "@/lib/stores/audit-log";
import { staleVersionSeverity, type AlertKind } from "@/lib/model/alerts/alert-kinds";
import { idempotencyWindowMs } from "@/lib/connectors/effects";
import { raiseAlert, type RaiseAlertInput } from "@/lib/use-cases/alerts/divergence";
import { TaskStateSchema } from "@/lib/model/tasks/task-state";
import type { Actor } from "@/lib/model/actor";
import { checkStateInvariants } from "@/lib/model/tasks/transition-rules";
import { getWorkflowByDigest } from "@/lib/model/workflows";

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

export const monitorActor: Actor = { identity: "spiffe://verity.local/system/invariant-monitor", kind: "system" };

export const monitorChecks = ["task_states", "success_evidence", "unknown_outcomes", "write_conflicts", "checkpoint_restores", "audit_chains"] as const;
export type MonitorCheck = (typeof monitorChecks)[number];

export interface CheckReport {
  /** Rows (or audit streams) looked at. */
  examined: number;
  violations: number;
  /** New alerts. */
  raised: number;
  /** Sightings counted on an alert already open. */
  counted: number;
  error?: string;
}

const keyCursor = z.object({ afterId: z.string().nullable() });
/**
 * (xid, id) of the last row read from an append-only source. `at` is the
 * cursor of versions before the xid column: a first pass after the upgrade
 * skips what that cursor had passed, then the cursor is (xid, id) only.
 */
const commitCursor = z.object({
  xid: z.string().regex(/^[0-9]+$/).nullable().default(null),
  id: z.string().nullable(),
  at: z.string().nullable().default(null),
});
type CommitCursor = z.infer<typeof commitCursor>;
const emptyCommitCursor: CommitCursor = { xid: null, id: null, at: null };
const CursorSchema = z.object({
  task_states: keyCursor.default({ afterId: null }),
  success_evidence: keyCursor.default({ afterId: null }),
  write_conflicts: commitCursor.default(emptyCommitCursor),
  checkpoint_restores: commitCursor.default(emptyCommitCursor),
  audit_chains: z.object({ afterStream: z.string().nullable() }).default({ afterStream: null }),
});
export type MonitorCursor = z.infer<typeof CursorSchema>;

export interface MonitorDeps {
  /** The provider's idempotency window of a tool (default: lib/connectors/effects.ts). */
  idempotencyWindowMs?: (tool: string) => number;
}

export interface MonitorOptions {
  now?: Date;
  /** Rows per check per pass; VERITY_MONITOR_BATCH by default. */
  batchSize?: number;
  /** Audit streams verified per pass (each read whole). */
  auditStreamsPerPass?: number;
  /** Only these checks (tests); every check by default. */
  only?: readonly MonitorCheck[];
}

export interface MonitorPassResult {
  /** Null when another process's pass was in progress: this one did nothing. */
  run: InvariantMonitorRun | null;
  checks: Partial<Record<MonitorCheck, CheckReport>>;
  violations: number;
  alerts: Array<{ id: string; kind: string; taskId: string; created: boolean }>;
}

/** A pass not finished within this is presumed dead (its process crashed): the next may start. */
const STALE_RUN_MS = 5 * 60 * 1000;
const MONITOR_LOCK_KEY = "verity:invariant-monitor";

export async function runMonitorPass(db: Db, deps: MonitorDeps = {}, options: MonitorOptions = {}): Promise<MonitorPassResult> {
  const now = options.now ?? new Date();
  const batch = options.batchSize ?? getEnv().VERITY_MONITOR_BATCH;
  const claimed = await claimRun(db);
  if (!claimed) return { run: null, checks: {}, violations: 0, alerts: [] };
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
      cursor.checkpoint_restores = await checkRestores(ctx, r, cursor.checkpoint_restores);
    },
    audit_chains: async (r) => {
      cursor.audit_chains = await checkAuditChains(ctx, r, cursor.audit_chains);
    },
  };
  const errors: string[] = [];
  for (const check of monitorChecks) {
    if (options.only && !options.only.includes(check)) continue;
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
  }
  result.run = await db.invariantMonitorRun.update({
    where: { id: claimed.id },
    data: {
      finishedAt: new Date(),
      checks: result.checks as unknown as Prisma.InputJsonValue,
      violations: result.violations,
      cursor: cursor as unknown as Prisma.InputJsonValue,
      error: errors.length > 0 ? errors.join("; ").slice(0, 2000) : null,
    },
  });
  return result;
}

/**
 * Starts a run unless another process's run is in progress, and reads the
 * cursor the last finished run left. Serialized by a transaction-scoped
 * advisory lock, so two monitors never both start: an append-only row is
 * read by one pass, not counted twice.
 */
async function claimRun(db: Db): Promise<{ id: string; cursor: MonitorCursor } | null> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${MONITOR_LOCK_KEY}, 0))`;
    const running = await tx.invariantMonitorRun.findFirst({ where: { finishedAt: null, startedAt: { gt: new Date(Date.now() - STALE_RUN_MS) } }, select: { id: true } });
    if (running) return null;
    const last = await tx.invariantMonitorRun.findFirst({ where: { finishedAt: { not: null } }, orderBy: [{ startedAt: "desc" }, { id: "desc" }] });
    const cursor = CursorSchema.parse(last?.cursor ?? {});
    const id = newId("mon");
    // The claim's own time, not the pass's `now` (a test may pass one in the future): runs never overlap on this clock.
    await tx.invariantMonitorRun.create({ data: { id, startedAt: new Date(), checks: {}, violations: 0, cursor: cursor as unknown as Prisma.InputJsonValue } });
    return { id, cursor };
  });
}

interface PassContext {
  db: Db;
  now: Date;
  batch: number;
  windowOf: (tool: string) => number;
  auditStreams: number;
  result: MonitorPassResult;
}

async function raise(ctx: PassContext, report: CheckReport, input: RaiseAlertInput): Promise<void> {
  report.violations++;
  const raised = await ctx.db.$transaction((tx) => raiseAlert(tx, { source: "monitor", ...input }, monitorActor));
  if (raised.suppressed) return;
  if (raised.created) report.raised++;
  else report.counted++;
  ctx.result.alerts.push({ id: raised.alert.id, kind: raised.alert.kind, taskId: raised.alert.taskId, created: raised.created });
}

// ---------------------------------------------------------------------------
// Stored task states: TaskState v2, the workflow's state invariants, and the
// columns that repeat the document. The transition rules refuse all of these,
// so a violation was written around them (SQL, a bad restore, a bug).
// ---------------------------------------------------------------------------

async function checkTaskStates(ctx: PassContext, report: CheckReport, cursor: { afterId: string | null }): Promise<{ afterId: string | null }> {
  const rows = await ctx.db.task.findMany({
    where: cursor.afterId ? { id: { gt: cursor.afterId } } : {},
    orderBy: { id: "asc" },
    take: ctx.batch,
  });
  for (const row of rows) {
    report.examined++;
    const findings = inspectTaskRow(row);
    for (const f of findings) await raise(ctx, report, f);
  }
  // A short page is the end of the table: start again from the beginning next pass.
  return { afterId: rows.length < ctx.batch ? null : (rows[rows.length - 1]?.id ?? null) };
}

interface TaskRowLike {
  id: string;
  status: string;
  version: number;
  state: unknown;
  workflowDigest: string;
  workflowName: string;
  updatedBy: string;
}

/** The alerts a stored task row calls for (pure). Exported for unit tests. */
export function inspectTaskRow(row: TaskRowLike): RaiseAlertInput[] {
  const internal = { task_status: row.status, task_version: row.version, updated_by: row.updatedBy, workflow: row.workflowName };
  const broken = (invariants: Array<{ invariant: string; message: string }>): RaiseAlertInput => ({
    taskId: row.id,
    kind: "state_invariant_broken",
    message: `Task ${row.id} (version ${row.version}, ${row.status}) is stored in a state the rules would never write: ${invariants.map((v) => v.message).join(" ")}`,
    internal,
    external: { violations: invariants, stored_state: row.state },
    fingerprint: `state_invariant_broken:${row.id}:v${row.version}`,
    finalOnceResolved: true,
  });
  const def = getWorkflowByDigest(row.workflowDigest);
  if (!def) return [broken([{ invariant: "workflow_definition_available", message: `Its workflow digest ${row.workflowDigest} is unknown to this server.` }])];
  const parsed = TaskStateSchema.safeParse(row.state);
  if (!parsed.success) {
    return [broken(parsed.error.issues.slice(0, 10).map((i) => ({ invariant: "task_state_schema", message: `${i.path.join(".") || "state"}: ${i.message}.` })))];
  }
  const state = parsed.data;
  const violations = checkStateInvariants(def, state);
  const columns: Array<{ invariant: string; message: string }> = [];
  if (state.status !== row.status) columns.push({ invariant: "status_column_matches_state", message: `The status column says ${row.status}, the state document ${state.status}.` });
  if (state.version !== row.version) columns.push({ invariant: "version_column_matches_state", message: `The version column says ${row.version}, the state document ${state.version}.` });
  if (state.task_id !== row.id) columns.push({ invariant: "task_id_matches_state", message: `The state document names task ${state.task_id}.` });
  const out: RaiseAlertInput[] = [];
  const mandatory = violations.filter((v) => v.invariant === "mandatory_subtasks_completed");
  const others = [...violations.filter((v) => v.invariant !== "mandatory_subtasks_completed"), ...columns];
  if (mandatory.length > 0) {
    const open = state.subtasks.filter((s) => s.mandatory && s.status !== "COMPLETED");
    // The reconciler's verifySettled raises the same kind with the default fingerprint: one alert, whoever sees it first.
    out.push({
      taskId: row.id,
      kind: "completed_with_open_mandatory_subtask",
      message: `Task ${row.id} is ${row.status} with mandatory subtask(s) ${open.map((s) => s.id).join(", ")} not completed.`,
      internal,
      external: { open_mandatory_subtasks: open },
      finalOnceResolved: true,
    });
  }
  if (others.length > 0) out.push(broken(others));
  return out;
}

// ---------------------------------------------------------------------------
// Tool success without matching evidence (spec Invariant 4).
// ---------------------------------------------------------------------------

async function checkSuccessEvidence(ctx: PassContext, report: CheckReport, cursor: { afterId: string | null }): Promise<{ afterId: string | null }> {
  const rows = await ctx.db.execution.findMany({
    where: { status: { in: ["SUCCEEDED", "RECONCILED_SUCCEEDED"] }, ...(cursor.afterId ? { id: { gt: cursor.afterId } } : {}) },
    orderBy: { id: "asc" },
    take: ctx.batch,
  });
  for (const row of rows) {
    report.examined++;
    const problem = evidenceProblem(row.evidence, row);
    if (!problem) continue;
    await raise(ctx, report, {
      taskId: row.taskId,
      executionId: row.id,
      kind: "success_without_evidence",
      message: `${row.tool} (${row.toolCallId}) is recorded ${row.status}, but its evidence ${problem}.`,
      internal: { execution_status: row.status, idempotency_key: row.idempotencyKey, execution_id: row.id, attempt: row.attempt },
      external: { evidence: row.evidence ?? null, problem },
      fingerprint: `success_without_evidence:${row.id}:v${row.version}`,
      finalOnceResolved: true,
    });
  }
  return { afterId: rows.length < ctx.batch ? null : (rows[rows.length - 1]?.id ?? null) };
}

/**
 * What is wrong with a success's evidence, in words, or null when it names
 * this execution (its id or its idempotency key) and nothing else. Stricter
 * than the outcome's own check (execution-rules.ts), which accepts evidence
 * naming ours among others: evidence that also names another execution or
 * key is a record of someone else's effect as much as ours.
 */
export function evidenceProblem(evidence: unknown, execution: Pick<Execution, "id" | "idempotencyKey">): string | null {
  if (!isRecord(evidence)) return "is missing";
  const keys = new Set<string>();
  const ids = new Set<string>();
  const collect = (node: Record<string, unknown>, depth: number) => {
    for (const k of ["idempotency_key", "idempotencyKey"]) if (typeof node[k] === "string") keys.add(node[k]);
    for (const k of ["execution_id", "executionId"]) if (typeof node[k] === "string") ids.add(node[k]);
    if (depth >= 2) return;
    for (const nested of ["metadata", "record", "refund", "note"]) {
      const child = node[nested];
      if (isRecord(child)) collect(child, depth + 1);
    }
  };
  collect(evidence, 0);
  const otherKeys = [...keys].filter((k) => k !== execution.idempotencyKey);
  const otherIds = [...ids].filter((i) => i !== execution.id);
  if (otherKeys.length > 0 || otherIds.length > 0) {
    const named = [...otherIds.map((i) => `execution ${i}`), ...otherKeys.map((k) => `key ${k}`)].join(", ");
    return `names another effect (${named})`;
  }
  if (!keys.has(execution.idempotencyKey) && !ids.has(execution.id)) return "names neither this execution nor its idempotency key";
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

// ---------------------------------------------------------------------------
// Unknown outcomes older than the provider's idempotency window.
// ---------------------------------------------------------------------------

async function checkUnknownOutcomes(ctx: PassContext, report: CheckReport): Promise<void> {
  const tools = await ctx.db.execution.findMany({ where: { status: { in: ["OUTCOME_UNKNOWN", "SENT"] } }, distinct: ["tool"], select: { tool: true } });
  for (const { tool } of tools) {
    const windowMs = ctx.windowOf(tool);
    const cutoff = new Date(ctx.now.getTime() - windowMs);
    // Past the window the set is small and stays small (each is alerted once); oldest first, a batch a pass.
    const rows = await ctx.db.execution.findMany({
      where: {
        tool,
        status: { in: ["OUTCOME_UNKNOWN", "SENT"] },
        OR: [{ sentAt: { lt: cutoff } }, { sentAt: null, createdAt: { lt: cutoff } }],
      },
      orderBy: [{ sentAt: "asc" }, { id: "asc" }],
      take: ctx.batch,
    });
    for (const row of rows) {
      report.examined++;
      const since = row.sentAt ?? row.createdAt;
      const ageMs = ctx.now.getTime() - since.getTime();
      await raise(ctx, report, {
        taskId: row.taskId,
        executionId: row.id,
        kind: "unknown_outcome_expired",
        message: `${row.tool} (${row.toolCallId}) has been ${row.status === "SENT" ? "SENT without an outcome" : "OUTCOME_UNKNOWN"} for ${formatDuration(ageMs)}, past the provider's ${formatDuration(windowMs)} idempotency window: a retry under key ${row.idempotencyKey} may no longer be recognised. Reconcile it; do not retry it.`,
        internal: { execution_status: row.status, sent_at: row.sentAt, idempotency_key: row.idempotencyKey, attempt: row.attempt },
        external: { idempotency_window_ms: windowMs, age_ms: ageMs, window_ended_at: new Date(since.getTime() + windowMs) },
        fingerprint: `unknown_outcome_expired:${row.id}:${row.attemptId}`,
      });
    }
  }
}

// ---------------------------------------------------------------------------
// Refused writes (write_conflicts, recorded by tasks.ts on the refusal path).
// ---------------------------------------------------------------------------

async function checkWriteConflicts(ctx: PassContext, report: CheckReport, cursor: CommitCursor): Promise<CommitCursor> {
  const { rows, next } = await readCommittedForward(ctx, "write_conflicts", "at", cursor);
  const found = await ctx.db.writeConflict.findMany({ where: { id: { in: rows.map((r) => r.id) } } });
  const byId = new Map(found.map((r) => [r.id, r]));
  for (const { id } of rows) {
    const row = byId.get(id)!;
    report.examined++;
    const finding = await judgeWriteConflict(ctx.db, row);
    if (finding) await raise(ctx, report, finding);
  }
  return next;
}

/**
 * The oldest transaction id still running in this database (or prepared
 * there), as a 64-bit xid8 number; the next id to be assigned when none is.
 * pg_snapshot_xmin would do, but it is cluster-wide: a long transaction in
 * another database on a shared server would hold these checks back for its
 * whole length. pg_stat_activity gives 32-bit xids: each is placed in the
 * epoch of the snapshot's next id (or the one before, if it is above it).
 * Only the application's role writes these tables, and its own sessions'
 * xids are always visible to it.
 */
const committedHorizonSql = Prisma.sql`
  WITH snap AS (SELECT (pg_snapshot_xmax(pg_current_snapshot())::text)::bigint AS next),
       running AS (
         SELECT backend_xid::text::bigint AS x FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL
         UNION ALL
         SELECT transaction::text::bigint FROM pg_prepared_xacts WHERE database = current_database())
  SELECT coalesce(min(CASE WHEN r.x <= s.next % 4294967296 THEN (s.next / 4294967296) * 4294967296 + r.x
                           ELSE (s.next / 4294967296 - 1) * 4294967296 + r.x END), s.next)
    FROM snap s LEFT JOIN running r ON true
   GROUP BY s.next`;

/**
 * The next rows of an append-only table in commit-safe order. Ids and
 * timestamps are taken before commit, so a row can commit after a later
 * one was read: a cursor on (at, id) would pass it for good (and a row of
 * the same millisecond with a smaller random id too). Instead each row
 * carries its writing transaction's id, and only rows whose transaction is
 * older than every transaction still running in this database are read
 * (`committedHorizonSql`): that set is final, so reading it in (xid, id)
 * order and resuming after the last row read examines every row exactly
 * once. A row of a transaction still open waits for a later pass.
 */
async function readCommittedForward(
  ctx: PassContext,
  table: "write_conflicts" | "checkpoint_restores",
  timeColumn: "at" | "created_at",
  cursor: CommitCursor,
): Promise<{ rows: { id: string }[]; next: CommitCursor }> {
  const source = Prisma.raw(table);
  const at = Prisma.raw(timeColumn);
  const legacy = cursor.xid === null && cursor.at && cursor.id ? Prisma.sql`AND (${at}, id) > (${new Date(cursor.at)}::timestamptz, ${cursor.id})` : Prisma.empty;
  const after = cursor.xid !== null && cursor.id ? Prisma.sql`AND (xid, id) > (${cursor.xid}::bigint, ${cursor.id})` : Prisma.empty;
  const rows = await ctx.db.$queryRaw<{ id: string; xid: bigint | string }[]>`
    SELECT id, xid FROM ${source}
     WHERE xid < (${committedHorizonSql}) ${after} ${legacy}
     ORDER BY xid, id
     LIMIT ${ctx.batch}`;
  const last = rows[rows.length - 1];
  return { rows, next: last ? { xid: String(last.xid), id: last.id, at: null } : cursor };
}

type WriteConflictRow = Awaited<ReturnType<Db["writeConflict"]["findFirstOrThrow"]>>;

/**
 * Every fencing refusal is an alert: a worker whose lease was taken over
 * kept working (a zombie), and may be acting on the outside world on a view
 * that stopped being its own. A version refusal is ordinary contention —
 * two writers, one wins, the other reads again — and is alerted only when
 * the writer's view had stopped being true in a way that matters: the task
 * had since ended (the spec's worker A writing RUNNING over B's COMPLETED),
 * or moved to another status than the one the writer read it in.
 */
async function judgeWriteConflict(db: Db, row: WriteConflictRow): Promise<RaiseAlertInput | null> {
  const internal = { writer: row.actor, expected_version: row.expectedVersion, fencing_token: row.fencingToken, refused_at: row.at };
  if (row.kind === "fencing") {
    const lease = await db.lease.findUnique({ where: { taskId: row.taskId } });
    return {
      taskId: row.taskId,
      kind: "stale_write",
      message: `${row.actor} wrote to task ${row.taskId} with fencing token ${row.fencingToken ?? "(none)"}, which is not the current lease: a worker kept working after losing its lease. The write was refused.`,
      internal,
      external: { kind: "fencing", current_lease: lease ? { holder: lease.holder, fencing_token: lease.fencingToken.toString(), expires_at: lease.expiresAt } : null },
      fingerprint: `stale_write:fencing:${row.taskId}:${row.actor}`,
    };
  }
  if (row.kind !== "version" || row.currentStatus === null || row.currentVersion === null) return null;
  const [seen, task] = await Promise.all([
    db.transition.findFirst({ where: { taskId: row.taskId, toVersion: row.expectedVersion }, select: { toStatus: true } }),
    db.task.findUnique({ where: { id: row.taskId }, select: { workflowDigest: true } }),
  ]);
  const def = task ? getWorkflowByDigest(task.workflowDigest) : undefined;
  const ended = !!def?.states[row.currentStatus]?.terminal;
  const moved = seen !== null && seen.toStatus !== row.currentStatus;
  if (!ended && !moved) return null;
  const why = ended
    ? `the task had already ended ${row.currentStatus} (version ${row.currentVersion})`
    : `the task had moved from ${seen?.toStatus} to ${row.currentStatus} (version ${row.currentVersion})`;
  return {
    taskId: row.taskId,
    kind: "stale_write",
    severity: ended ? "critical" : staleVersionSeverity,
    message: `${row.actor} wrote to task ${row.taskId} expecting version ${row.expectedVersion}${seen ? ` (${seen.toStatus})` : ""}, but ${why}. The write was refused; the writer acted on a view that was no longer true.`,
    internal: { ...internal, status_seen: seen?.toStatus ?? null },
    external: { kind: "version", current_version: row.currentVersion, current_status: row.currentStatus, task_ended: ended },
    fingerprint: `stale_write:version:${row.taskId}:${row.actor}`,
  };
}

// ---------------------------------------------------------------------------
// Refused checkpoint restores (checkpoint_restores, written by checkpoints.ts).
// ---------------------------------------------------------------------------

/**
 * Refusals that mean someone tried to put an older snapshot over newer or
 * finished state: the checkpoint predates the committed version and no
 * rewind was chosen, the plan was made at a version the task has left, or
 * the task has ended. `corrupt` is its own kind. The other refusals are the
 * restore's safety rules doing their job on a question, not stale data:
 * `diverged`, `unreconciled` and `awaiting_human` are already an alert, an
 * unknown outcome or a review of their own; `current`, `incompatible` and
 * `invalid_state` are nothing to restore or a workflow change.
 */
export const staleRestoreRefusals: ReadonlySet<string> = new Set(["stale", "version_conflict", "terminal"]);

async function checkRestores(ctx: PassContext, report: CheckReport, cursor: CommitCursor): Promise<CommitCursor> {
  const { rows: keys, next } = await readCommittedForward(ctx, "checkpoint_restores", "created_at", cursor);
  const found = await ctx.db.checkpointRestore.findMany({ where: { id: { in: keys.map((r) => r.id) } } });
  const byId = new Map(found.map((r) => [r.id, r]));
  const rows = keys.map(({ id }) => byId.get(id)!);
  for (const row of rows) {
    report.examined++;
    if (row.outcome !== "refused" || !row.refusal) continue;
    const plan = row.plan as { refusal?: { message?: string }; current?: { version?: number; status?: string }; checkpoint?: { stateVersion?: number; status?: string } };
    const internal = { restore_id: row.id, checkpoint_id: row.checkpointId, checkpoint: plan.checkpoint ?? null, actor: row.actor, reason: row.reason, rewind: row.rewind };
    const external = { refusal: row.refusal, message: plan.refusal?.message ?? null, task_at: plan.current ?? null, from_version: row.fromVersion };
    let kind: AlertKind | null = null;
    if (staleRestoreRefusals.has(row.refusal)) kind = "stale_restore_attempt";
    else if (row.refusal === "corrupt") kind = "corrupt_checkpoint";
    if (!kind) continue;
    await raise(ctx, report, {
      taskId: row.taskId,
      kind,
      message:
        kind === "corrupt_checkpoint"
          ? `Checkpoint ${row.checkpointId} of task ${row.taskId} does not verify: ${plan.refusal?.message ?? "refused as corrupt"}`
          : `${row.actor} tried to restore checkpoint ${row.checkpointId} (version ${plan.checkpoint?.stateVersion ?? "?"}) over task ${row.taskId} at version ${plan.current?.version ?? row.fromVersion} (${plan.current?.status ?? "?"}); refused as ${row.refusal}: ${plan.refusal?.message ?? ""}`,
      internal,
      external,
      fingerprint: kind === "corrupt_checkpoint" ? `corrupt_checkpoint:${row.checkpointId}` : `stale_restore_attempt:${row.taskId}:${row.checkpointId}:${row.refusal}`,
    });
  }
  return next;
}

// ---------------------------------------------------------------------------
// Audit chains: a few streams per pass, verified by the same code as
// `npm run audit:verify` and the console's badge (audit-log.ts
// verifyAuditStreams), which re-walks a stream whose head moved while it was
// read, so an append during the pass is not mistaken for a break.
// ---------------------------------------------------------------------------

async function checkAuditChains(ctx: PassContext, report: CheckReport, cursor: { afterStream: string | null }): Promise<{ afterStream: string | null }> {
  const heads = await ctx.db.auditStream.findMany({
    where: cursor.afterStream ? { stream: { gt: cursor.afterStream } } : {},
    orderBy: { stream: "asc" },
    take: ctx.auditStreams,
    select: { stream: true },
  });
  report.examined += heads.length;
  const verification = await verifyAuditStreams(ctx.db, heads.map((h) => h.stream));
  // One alert per broken stream: its first break.
  const firstPerStream = new Map<string, AuditBreak>();
  for (const brk of verification.breaks) if (!firstPerStream.has(brk.stream)) firstPerStream.set(brk.stream, brk);
  for (const brk of firstPerStream.values()) {
    await raise(ctx, report, {
      taskId: await taskOfBreak(ctx.db, brk),
      kind: "audit_chain_break",
      message: `The audit chain ${brk.stream} is broken at seq ${brk.seq}: ${brk.message}`,
      internal: { stream: brk.stream },
      external: { break: brk },
      fingerprint: `audit_chain_break:${brk.stream}:${brk.seq}:${brk.kind}`,
      finalOnceResolved: true,
    });
  }
  return { afterStream: heads.length < ctx.auditStreams ? null : (heads[heads.length - 1]?.stream ?? null) };
}

/** The task a break is about: a task stream names it; other aggregates' entries carry it ('' when none does). */
async function taskOfBreak(db: Db, brk: AuditBreak): Promise<string> {
  if (brk.stream.startsWith("task:")) return brk.stream.slice("task:".length);
  const entry = brk.entryId ? await getAuditEntry(db, brk.entryId) : null;
  if (entry?.taskId) return entry.taskId;
  const any = await db.auditEntry.findFirst({ where: { stream: brk.stream, taskId: { not: null } }, select: { taskId: true } });
  return any?.taskId ?? "";
}

// ---------------------------------------------------------------------------
// Reads for the console and the API.
// ---------------------------------------------------------------------------

export async function latestMonitorRun(db: Db): Promise<InvariantMonitorRun | null> {
  return db.invariantMonitorRun.findFirst({ where: { finishedAt: { not: null } }, orderBy: [{ startedAt: "desc" }, { id: "desc" }] });
}

/** The monitor's health at a glance: its last finished pass, and how many passes ended in an error lately. */
export async function monitorStatus(db: Db): Promise<{ last: InvariantMonitorRun | null; runningSince: Date | null }> {
  const [last, running] = await Promise.all([
    latestMonitorRun(db),
    db.invariantMonitorRun.findFirst({ where: { finishedAt: null, startedAt: { gt: new Date(Date.now() - STALE_RUN_MS) } }, select: { startedAt: true } }),
  ]);
  return { last, runningSince: running?.startedAt ?? null };
}

export const MonitorRunInputSchema = z.strictObject({
  only: z.array(z.enum(monitorChecks)).min(1).optional(),
});
