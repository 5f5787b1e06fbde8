import { deleteClaimsOfTask } from "@/lib/stores/inbox-claims";
import { z } from "zod";
import type { Db, Tx } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import { parseOrThrow } from "@/lib/core/validation";
import { MAX_DETAILS_BYTES, SYSTEM_STREAM, type AuditActor } from "@/lib/model/audit/audit-chain";
import { appendAuditEntry, type AuditEntry } from "@/lib/stores/audit-log";
import { deleteTaskRows } from "@/lib/stores/tasks/task-store";
import { deleteCheckpointsOfTask } from "@/lib/stores/checkpoint-store";
import { deleteExecutionsOfTask } from "@/lib/stores/execution-store";
import { deleteLookupsOfTask } from "@/lib/stores/effect-lookups";
import { deleteLeaseOfTask } from "@/lib/stores/leases";
import { readRetentionWalk, saveRetentionWalk, type WalkPosition } from "@/lib/stores/task-retention-walks";
import { deleteMessagesOfTask } from "@/lib/stores/messaging";
import { deleteReviewsOfTask } from "@/lib/stores/review-store";
import { deleteInstructionsOfTask } from "@/lib/stores/instructions";
import { deleteDelegationsOfTask } from "@/lib/stores/task-delegations";
import { deleteGraphThreadOfTask } from "@/lib/stores/graph-checkpoints";
import { deleteRestoresOfTask } from "@/lib/use-cases/checkpoints/checkpoint-rows";
import { deleteAlertsOfTask } from "@/lib/use-cases/alerts/divergence";
import { cutAuditStream, MIN_RETENTION_DAYS, planWholeStreamCuts } from "@/lib/use-cases/audit/audit-retention";
import { dataClassRank, dataClasses, UNDECLARED_CLASS, type DataClass } from "@/lib/model/retention/data-classes-held";

/**
 * Task-data retention: a finished task's data leaves every store at once.
 * One run deletes, in ONE transaction, for each task that ended before the
 * cutoff, has been quiet since, has nothing left pending and is under no
 * legal hold: its rows in every table that holds task data (each through
 * the module that owns that table's writes) and its audit chains whole
 * (task, instruction ledger, executions, reviews, checkpoints, alerts),
 * each stream cut to an anchor so the log still verifies. The run records
 * itself: an audit.retention_applied entry (scope "task_data") with the
 * task ids and the rows removed per store — never what they held.
 *
 * A run sees one tenant's tasks (row-level security: it runs on the
 * tenant's client). With `classes` (a tenant's retention policy,
 * apply-retention-policy.ts) each task's cutoff is the term of the most
 * sensitive data class it holds, and a task holding a class with no term is
 * kept.
 */

/** Counts per table, by table name: what a run removed. */
export type RowCounts = Record<string, number>;

export interface DeletedTask {
  id: string;
  status: string;
  /** When its last activity was (the task, its rows, its audit entries): before the cutoff. */
  lastActivityAt: Date;
  /** Under a policy: the most sensitive class its data holds, whose term it was kept for. */
  dataClass?: DataClass;
  rows: RowCounts;
}

/**
 * A tenant's policy as a run applies it: the terms per class, and the class
 * each workflow version (by digest) and each tool (by name, its most
 * sensitive version) declares; what is not in the maps is undeclared, so
 * confidential.
 */
export interface ClassTerms {
  terms: Record<DataClass, number | null>;
  workflowClasses: ReadonlyMap<string, DataClass>;
  toolClasses: ReadonlyMap<string, DataClass>;
}

/**
 * A run's walk over the tasks past its cutoff (docs/cost-growth.md, "The
 * retention run"): at most MAX_WINDOWS_PER_RUN windows, from where the
 * previous run stopped.
 */
export interface RetentionWalk {
  /** Tasks past the cutoff the run read and judged: at most MAX_TASKS_READ_PER_RUN. */
  tasksRead: number;
  /** Whether it began where the previous run stopped (else at the oldest task). */
  resumed: boolean;
  /**
   * Whether it got to the newest task past the cutoff (then, when it had
   * resumed, going on from the oldest): a pass begun at the oldest is done.
   */
  reachedCutoff: boolean;
  /**
   * Why it stopped: "batch", its `maxTasks` were found; "bound", it read its
   * windows without going all the way round, and the next run goes on from
   * there; "end", it read every task past the cutoff.
   */
  stopped: "batch" | "bound" | "end";
}

export interface TaskRetentionResult {
  cutoff: Date;
  /** The run's term (under a policy, its shortest). */
  olderThanDays: number;
  /** The policy's terms per class, when the run applied one. */
  policy: Record<DataClass, number | null> | null;
  tasks: DeletedTask[];
  /** Sums over `tasks`, every table named (0 included), so a report shows every store. */
  rows: RowCounts;
  /** Finished tasks old enough that a legal hold kept, among those the run read (at most `maxHeldReported` ids). */
  heldTasks: string[];
  /** How far the run walked the tasks past its cutoff, and why it stopped there. */
  walk: RetentionWalk;
  /** The run's audit entry (the first, when its cuts needed several); null when nothing was deleted. */
  entry: AuditEntry | null;
  /** Audit entries removed, and the streams now starting at an anchor. */
  streamsCut: number;
}

/** Every table a task's data is in, in the order a run deletes from them (children first). */
export const taskDataTables = [
  "graph_writes",
  "graph_blobs",
  "graph_checkpoints",
  "graph_threads",
  "task_delegations",
  "inbox_claims",
  "task_instructions",
  "divergence_alerts",
  "effect_lookups",
  "review_decisions",
  "reviews",
  "execution_events",
  "executions",
  "inbox_events",
  "outbox_messages",
  "leases",
  "checkpoint_restores",
  "checkpoints",
  "write_conflicts",
  "transitions",
  "tasks",
  "audit_entries",
] as const;
export type TaskDataTable = (typeof taskDataTables)[number];

export const MAX_TASKS_PER_RUN = 25;

export const TaskRetentionInputSchema = z.strictObject({
  /** A task's data goes this many days after its last activity in a terminal state. */
  olderThanDays: z.number().int().min(MIN_RETENTION_DAYS).max(36_500),
  /**
   * At most this many tasks in one run (one transaction); the next run takes
   * the next ones. 25 at most, so the run's entry (ids and counts per store)
   * stays within what an audit entry keeps.
   */
  maxTasks: z.number().int().min(1).max(MAX_TASKS_PER_RUN).default(MAX_TASKS_PER_RUN),
});
export type TaskRetentionInput = z.input<typeof TaskRetentionInputSchema>;

/**
 * An audit entry keeps at most 32 KiB of details (MAX_DETAILS_BYTES; larger
 * ones are replaced by their digest, and the anchors could no longer be
 * checked against them): a run's cuts are spread over as many entries as
 * they need, each kept under this many bytes, every entry written before
 * the first cut it records.
 */
const DETAILS_BUDGET_BYTES = MAX_DETAILS_BYTES - 4 * 1024;

type RecordedCut = { stream: string; through_seq: number; hash: string };

/** Cuts in groups: the first sharing its entry with `firstUsed` bytes of summary, each group under the budget and `maxCount`. */
function packCuts(cuts: RecordedCut[], firstUsed: number, maxCount: number): RecordedCut[][] {
  const groups: RecordedCut[][] = [[]];
  let used = firstUsed;
  for (const cut of cuts) {
    const size = Buffer.byteLength(JSON.stringify(cut), "utf8") + 1;
    const current = groups[groups.length - 1]!;
    if (current.length >= maxCount || used + size > DETAILS_BUDGET_BYTES) {
      groups.push([cut]);
      used = 256 + size;
    } else {
      current.push(cut);
      used += size;
    }
  }
  return groups;
}
const maxHeldReported = 50;

/** Statuses of an execution whose effect is not settled: its task's data must stay until it is. */
const pendingExecutionStatuses = ["INTENT_RECORDED", "SENT", "OUTCOME_UNKNOWN", "NEEDS_HUMAN"];

interface Candidate {
  id: string;
  status: string;
  updated_at: Date;
  created_at: Date;
  last_at: Date;
  /** The cutoff this task was chosen against (its class's, under a policy). */
  cutoff_at: Date;
  data_class: DataClass | null;
  held: boolean;
}

/** A VALUES list of (key, class rank), or an empty relation of that shape. */
function rankRows(classes: ReadonlyMap<string, DataClass>): Prisma.Sql {
  if (classes.size === 0) return Prisma.sql`SELECT NULL::text AS key, NULL::int AS rank WHERE false`;
  return Prisma.sql`SELECT * FROM (VALUES ${Prisma.join(
    [...classes].map(([key, c]) => Prisma.sql`(${key}::text, ${dataClassRank[c]}::int)`),
  )}) AS v(key, rank)`;
}

/**
 * Under a policy, each finished task's class rank — the most sensitive of
 * its workflow's declaration, the tools its executions called, and the free
 * text some stores always hold (instructions, reviews and their decisions,
 * alerts: undeclared, so confidential) — and the cutoff of that class's
 * term (null: kept forever). Without one, every task has the run's cutoff.
 */
function cutoffOfTask(
  now: Date,
  cutoff: Date,
  classes: ClassTerms | undefined,
): { ctes: Prisma.Sql; cutoff: Prisma.Sql; rank: Prisma.Sql } {
  if (!classes)
    return {
      ctes: Prisma.empty,
      cutoff: Prisma.sql`${cutoff.toISOString()}::timestamptz`,
      rank: Prisma.sql`NULL::int`,
    };
  const undeclared = dataClassRank[UNDECLARED_CLASS];
  const termRows = Prisma.join(
    dataClasses.map((c) => Prisma.sql`(${dataClassRank[c]}::int, ${classes.terms[c]}::int)`),
  );
  return {
    ctes: Prisma.sql`wf AS (${rankRows(classes.workflowClasses)}), tl AS (${rankRows(classes.toolClasses)}),
      term(rank, days) AS (VALUES ${termRows}),`,
    rank: Prisma.sql`greatest(
               coalesce((SELECT wf.rank FROM wf WHERE wf.key = t.workflow_digest), ${undeclared}::int),
               (SELECT max(coalesce(tl.rank, ${undeclared}::int)) FROM executions x LEFT JOIN tl ON tl.key = x.tool WHERE x.task_id = t.id),
               CASE WHEN EXISTS (SELECT 1 FROM task_instructions i WHERE i.task_id = t.id)
                      OR EXISTS (SELECT 1 FROM reviews r WHERE r.task_id = t.id)
                      OR EXISTS (SELECT 1 FROM divergence_alerts a WHERE a.task_id = t.id)
                    THEN ${undeclared}::int END)`,
    cutoff: Prisma.sql`(${now.toISOString()}::timestamptz - make_interval(days => (SELECT days FROM term WHERE term.rank = f.rank)))`,
  };
}

/**
 * The finished tasks a run may take: in a terminal state of their pinned
 * workflow (workflow_versions says which), every trace of them older than
 * the cutoff — the task row, its executions and alerts, its messages,
 * refused writes, lease, audit entries (an annotation added yesterday keeps
 * a task another term) — and nothing left pending: no unsettled execution,
 * undecided review, unresolved alert, undelivered message or open lookup.
 * `held`: an unreleased legal hold covers it (the task itself, or a time
 * range its life overlaps).
 *
 * What a run costs is its bound, not the table (docs/cost-growth.md): the
 * tasks last updated before the cutoff are read a window at a time in the
 * order of the (updated_at, id) index, each window judged whole (the
 * planner will not walk the index lazily under that many conditions, so the
 * window's LIMIT is what bounds it), from where the previous run stopped
 * (task_retention_walks) up to the cutoff, then from the oldest back to that
 * point. The walk stops once `limit` tasks qualify, once it has read
 * MAX_WINDOWS_PER_RUN windows, or once it has gone all the way round. Tasks
 * kept ahead of the deletable ones (not finished, still pending, held, kept
 * longer by their class) are passed over by successive runs, each reading at
 * most its bound, instead of being read again from the oldest by every run.
 * `next` is where the next run resumes: after the last task taken when the
 * batch filled, after the last task read when the bound stopped it, at the
 * oldest when it went round. The held tasks reported are those in the
 * windows read, at most maxHeldReported.
 */
async function findFinishedTasks(
  tx: Tx,
  now: Date,
  cutoff: Date,
  limit: number,
  classes: ClassTerms | undefined,
  start: WalkPosition | null,
): Promise<{ candidates: Candidate[]; walk: RetentionWalk; next: WalkPosition | null }> {
  // After the saved position up to the cutoff, then from the oldest through it; without one, the oldest to the cutoff.
  const legs: Array<{ after: WalkPosition | null; through: WalkPosition | null }> = start
    ? [
        { after: start, through: null },
        { after: null, through: start },
      ]
    : [{ after: null, through: null }];
  const taken: Candidate[] = [];
  const held: Candidate[] = [];
  let windows = 0;
  let tasksRead = 0;
  let reachedCutoff = false;
  const stop = (stopped: RetentionWalk["stopped"], next: WalkPosition | null) => ({
    candidates: [...taken, ...held],
    walk: { tasksRead, resumed: start !== null, reachedCutoff, stopped },
    next,
  });
  for (const leg of legs) {
    let after = leg.after;
    do {
      if (windows === MAX_WINDOWS_PER_RUN) return stop("bound", after);
      const window = await finishedInWindow(tx, now, cutoff, { after, through: leg.through }, classes);
      windows += 1;
      tasksRead += window.read;
      for (const c of window.candidates) {
        if (!c.held && taken.length < limit) taken.push(c);
        else if (c.held && held.length < maxHeldReported) held.push(c);
      }
      const last = taken[taken.length - 1];
      if (last && taken.length === limit) return stop("batch", { updatedAt: last.updated_at, id: last.id });
      after = window.last;
    } while (after !== null);
    if (leg.through === null) reachedCutoff = true;
  }
  return stop("end", null);
}

/** Tasks walked per window of findFinishedTasks. */
const retentionWindow = 200;

/**
 * Windows one run reads at most: 10 × 200 = 2,000 tasks judged. Enough that a
 * run fills its batch of 25 whenever fewer than about 2,000 tasks past the
 * cutoff are kept ahead of the next deletable ones (tasks still running,
 * waiting on work, held, or kept longer by their class); small enough that
 * the run's one transaction stays short (each window is one judging query
 * over 200 tasks, a few thousand buffers: docs/benchmarks.md, "Cost
 * growth"). Past it, the next run resumes where this one stopped, so K tasks
 * kept ahead of a deletable one are passed over in ⌈K / 2,000⌉ runs, each
 * reading at most its bound, instead of every run reading all K.
 */
const MAX_WINDOWS_PER_RUN = 10;

/** Tasks past the cutoff one run reads at most. */
export const MAX_TASKS_READ_PER_RUN = MAX_WINDOWS_PER_RUN * retentionWindow;

/**
 * One window of the walk: the next tasks updated before the cutoff, after
 * `after` and up to `through` (each optional), and those of them a run may
 * take. `last`: where the next window starts, null when this one reached the
 * end of its range.
 */
async function finishedInWindow(
  tx: Tx,
  now: Date,
  cutoff: Date,
  range: { after: WalkPosition | null; through: WalkPosition | null },
  classes: ClassTerms | undefined,
): Promise<{ candidates: Candidate[]; read: number; last: WalkPosition | null }> {
  const { after, through } = range;
  const at = cutoff.toISOString();
  const byClass = cutoffOfTask(now, cutoff, classes);
  const walked = await tx.$queryRaw<Array<{ id: string; updated_at: Date }>>`
    SELECT id, updated_at FROM tasks
     WHERE updated_at < ${at}::timestamptz
       ${after ? Prisma.sql`AND (updated_at, id) > (${after.updatedAt.toISOString()}::timestamptz, ${after.id})` : Prisma.empty}
       ${through ? Prisma.sql`AND (updated_at, id) <= (${through.updatedAt.toISOString()}::timestamptz, ${through.id})` : Prisma.empty}
     ORDER BY updated_at, id
     LIMIT ${retentionWindow}`;
  if (walked.length === 0) return { candidates: [], read: 0, last: null };
  const tail = walked[walked.length - 1]!;
  const last = walked.length < retentionWindow ? null : { updatedAt: tail.updated_at, id: tail.id };
  const rows = await tx.$queryRaw<Array<Omit<Candidate, "data_class"> & { rank: number | null }>>`
    WITH ${byClass.ctes} finished AS (
      SELECT t.id, t.status, t.created_at, t.updated_at, ${byClass.rank} AS rank, greatest(
               t.updated_at,
               (SELECT max(e.at) FROM audit_entries e WHERE e.task_id = t.id),
               (SELECT max(x.updated_at) FROM executions x WHERE x.task_id = t.id),
               (SELECT max(greatest(a.updated_at, a.last_seen_at)) FROM divergence_alerts a WHERE a.task_id = t.id),
               (SELECT max(coalesce(o.delivered_at, o.created_at)) FROM outbox_messages o WHERE o.task_id = t.id),
               (SELECT max(i.received_at) FROM inbox_events i WHERE i.task_id = t.id),
               (SELECT max(w.at) FROM write_conflicts w WHERE w.task_id = t.id),
               (SELECT max(l.expires_at) FROM leases l WHERE l.task_id = t.id)
             ) AS last_at
        FROM tasks t
        JOIN workflow_versions v ON v.digest = t.workflow_digest
       WHERE t.id IN (${Prisma.join(walked.map((w) => w.id))})
         AND t.updated_at < ${at}::timestamptz
         AND coalesce((v.definition -> 'states' -> t.status ->> 'terminal')::boolean, false)
         AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.task_id = t.id
                          AND x.status::text IN (${Prisma.join(pendingExecutionStatuses)}))
         AND NOT EXISTS (SELECT 1 FROM reviews r JOIN executions x ON x.id = r.execution_id
                          WHERE x.task_id = t.id AND r.status IN ('OPEN', 'ESCALATED'))
         AND NOT EXISTS (SELECT 1 FROM divergence_alerts a WHERE a.task_id = t.id AND a.status IN ('OPEN', 'ESCALATED'))
         AND NOT EXISTS (SELECT 1 FROM outbox_messages o WHERE o.task_id = t.id AND o.delivered_at IS NULL)
         AND NOT EXISTS (SELECT 1 FROM effect_lookups k JOIN executions x ON x.id = k.execution_id
                          WHERE x.task_id = t.id AND k.status IN ('QUEUED', 'CLAIMED'))
    ), dated AS (
      SELECT f.*, ${byClass.cutoff} AS cutoff_at FROM finished f
    )
    SELECT f.id, f.status, f.created_at, f.updated_at, f.last_at, f.cutoff_at, f.rank,
           EXISTS (SELECT 1 FROM audit_legal_holds h
                    WHERE h.released_at IS NULL
                      AND (h.task_id IS NULL OR h.task_id = f.id)
                      AND (h.from_at IS NULL OR f.last_at >= h.from_at)
                      AND (h.to_at IS NULL OR f.created_at < h.to_at)) AS held
      FROM dated f
     WHERE f.last_at < ${at}::timestamptz AND f.last_at < f.cutoff_at
     ORDER BY f.updated_at, f.id`;
  const candidates = rows.map(({ rank, ...row }) => ({
    ...row,
    data_class: rank === null ? null : (dataClasses.find((c) => dataClassRank[c] === rank) ?? null),
  }));
  return { candidates, read: walked.length, last };
}

/**
 * The chains of a task's own aggregates: the task's and its instruction
 * ledger's, and each execution's, review's, checkpoint's and alert's, plus
 * any other stream holding its entries but the shared ones (system, auth),
 * which only ever lose a prefix to audit retention.
 */
async function streamsOfTask(tx: Tx, taskId: string): Promise<string[]> {
  const rows = await tx.$queryRaw<Array<{ stream: string }>>`
    SELECT 'task:' || ${taskId} AS stream
    UNION SELECT 'instruction_ledger:' || ${taskId}
    UNION SELECT 'execution:' || id FROM executions WHERE task_id = ${taskId}
    UNION SELECT 'review:' || id FROM reviews WHERE task_id = ${taskId}
    UNION SELECT 'checkpoint:' || id FROM checkpoints WHERE task_id = ${taskId}
    UNION SELECT 'divergence_alert:' || id FROM divergence_alerts WHERE task_id = ${taskId}
    UNION SELECT DISTINCT stream FROM audit_entries WHERE task_id = ${taskId} AND stream NOT IN ('system', 'auth')`;
  return rows.map((r) => r.stream).sort();
}

/** One task's rows, every store, children before what they reference. */
async function deleteTaskData(tx: Tx, taskId: string): Promise<RowCounts> {
  return {
    ...(await deleteGraphThreadOfTask(tx, taskId)),
    ...(await deleteDelegationsOfTask(tx, taskId)),
    ...(await deleteClaimsOfTask(tx, taskId)),
    ...(await deleteInstructionsOfTask(tx, taskId)),
    ...(await deleteAlertsOfTask(tx, taskId)),
    ...(await deleteLookupsOfTask(tx, taskId)),
    ...(await deleteReviewsOfTask(tx, taskId)),
    ...(await deleteExecutionsOfTask(tx, taskId)),
    ...(await deleteMessagesOfTask(tx, taskId)),
    ...(await deleteLeaseOfTask(tx, taskId)),
    ...(await deleteRestoresOfTask(tx, taskId)),
    ...(await deleteCheckpointsOfTask(tx, taskId)),
    ...(await deleteTaskRows(tx, taskId)),
  };
}

function nonZero(rows: RowCounts): RowCounts {
  return Object.fromEntries(Object.entries(rows).filter(([, n]) => n > 0));
}

/**
 * One run: the first finished tasks past the cutoff and under no hold that
 * its walk meets (from where the previous run stopped, at most
 * MAX_WINDOWS_PER_RUN windows), at most `maxTasks`, deleted from every store
 * in one transaction with the run's audit entry and where the walk stopped.
 * Holds are locked first (as audit retention does), so a hold placed
 * meanwhile is either seen or waits for the run to commit; each task's row
 * is locked and re-checked as not changed since the cutoff, so a restore
 * racing the run either lands first (and the task is kept) or finds no
 * task. A run that finds nothing writes no entry, only where its walk
 * stopped (when that moved).
 */
export async function applyTaskRetention(
  db: Db,
  rawInput: TaskRetentionInput,
  actor: AuditActor,
  options: {
    cutsPerEntry?: number;
    /** The run's "now" (tests: a task's activity put past the cutoff without waiting days); the database still refuses a cutoff in its future. */
    clock?: () => number;
    /** A tenant's policy: each task kept for its class's term (`olderThanDays` is then the shortest term). */
    classes?: ClassTerms;
    /** Walk from the oldest task past the cutoff, not from where the previous run stopped (a pass begun by hand). */
    fromOldest?: boolean;
  } = {},
): Promise<TaskRetentionResult> {
  const input = parseOrThrow(TaskRetentionInputSchema, rawInput);
  const now = new Date((options.clock ?? Date.now)());
  const cutoff = new Date(now.getTime() - input.olderThanDays * 86_400_000);
  const cutsPerEntry = options.cutsPerEntry ?? Number.POSITIVE_INFINITY;
  return db.$transaction(
    async (tx) => {
      await tx.$executeRaw`LOCK TABLE audit_legal_holds IN SHARE MODE`;
      const saved = await readRetentionWalk(tx);
      const start = options.fromOldest ? null : saved;
      const { candidates, walk, next } = await findFinishedTasks(
        tx,
        now,
        cutoff,
        input.maxTasks,
        options.classes,
        start,
      );
      // Where the next run resumes, committed with this run's deletions or not at all.
      await saveRetentionWalk(tx, saved, next);
      const heldTasks = candidates
        .filter((c) => c.held)
        .slice(0, maxHeldReported)
        .map((c) => c.id);
      const chosen = candidates.filter((c) => !c.held).slice(0, input.maxTasks);
      const locked =
        chosen.length === 0
          ? []
          : await tx.$queryRaw<Array<{ id: string; updated_at: Date }>>`
              SELECT id, updated_at FROM tasks WHERE id IN (${Prisma.join(chosen.map((c) => c.id))})
                 AND updated_at < ${cutoff.toISOString()}::timestamptz
               ORDER BY id FOR UPDATE`;
      // Re-checked against each task's own cutoff (its class's term, under a policy), on the row as locked.
      const lockedAt = new Map(locked.map((r) => [r.id, r.updated_at]));
      const doomed = chosen.filter((c) => {
        const updatedAt = lockedAt.get(c.id);
        return updatedAt !== undefined && updatedAt < c.cutoff_at;
      });
      const rows: RowCounts = Object.fromEntries(taskDataTables.map((t) => [t, 0]));
      const run = { cutoff, olderThanDays: input.olderThanDays, policy: options.classes?.terms ?? null };
      if (doomed.length === 0) return { ...run, tasks: [], rows, heldTasks, walk, entry: null, streamsCut: 0 };

      // Plan every cut before anything is deleted: the stream names come from the rows.
      const streamsByTask = new Map<string, string[]>();
      for (const task of doomed) streamsByTask.set(task.id, await streamsOfTask(tx, task.id));
      const cuts = await planWholeStreamCuts(tx, [...new Set([...streamsByTask.values()].flat())]);
      const tasks: DeletedTask[] = [];
      for (const task of doomed) {
        const mine = new Set(streamsByTask.get(task.id));
        const deleted: RowCounts = {
          ...(await deleteTaskData(tx, task.id)),
          audit_entries: cuts.filter((c) => mine.has(c.stream)).reduce((n, c) => n + c.entries, 0),
        };
        tasks.push({
          id: task.id,
          status: task.status,
          lastActivityAt: task.last_at,
          ...(task.data_class ? { dataClass: task.data_class } : {}),
          rows: deleted,
        });
        for (const [table, n] of Object.entries(deleted)) rows[table] = (rows[table] ?? 0) + n;
      }

      // The run's entries, then the cuts they record (audit_cut_stream checks the entry exists).
      const summary = {
        scope: "task_data",
        older_than_days: input.olderThanDays,
        cutoff: cutoff.toISOString(),
        ...(options.classes ? { policy: options.classes.terms } : {}),
        tasks: tasks.map((t) => ({
          id: t.id,
          status: t.status,
          last_activity_at: t.lastActivityAt.toISOString(),
          ...(t.dataClass ? { data_class: t.dataClass } : {}),
          rows: nonZero(t.rows),
        })),
        rows: nonZero(rows),
        held_tasks: heldTasks,
        walk: { tasks_read: walk.tasksRead, resumed: walk.resumed, stopped: walk.stopped },
      };
      const recorded = cuts.map(({ stream, through_seq, hash }) => ({ stream, through_seq, hash }));
      const chunks = packCuts(recorded, Buffer.byteLength(JSON.stringify(summary), "utf8") + 64, cutsPerEntry);
      const entries: AuditEntry[] = [];
      for (const [part, chunk] of chunks.entries()) {
        const entry = await appendAuditEntry(tx, {
          action: "audit.retention_applied",
          actor,
          subject: { type: "audit_log", id: SYSTEM_STREAM },
          details:
            part === 0
              ? { ...summary, parts: chunks.length, cuts: chunk }
              : { scope: "task_data", run: entries[0]?.id, part: part + 1, parts: chunks.length, cuts: chunk },
        });
        // An entry cut down to its digest could not vouch for the anchors: refuse the whole run instead.
        if ("details_omitted" in entry.details)
          throw new Error(`task retention: the run's entry ${part + 1} outgrew the audit log's details limit`);
        entries.push(entry);
      }
      // Each stream is cut against its task's own cutoff (its class's term), never one in the present's future.
      const [{ now: present } = { now: new Date(0) }] = await tx.$queryRaw<Array<{ now: Date }>>`SELECT now() AS now`;
      const cutoffOfStream = new Map<string, Date>();
      for (const task of doomed)
        for (const stream of streamsByTask.get(task.id) ?? [])
          cutoffOfStream.set(stream, new Date(Math.min(task.cutoff_at.getTime(), present.getTime())));
      for (const [part, chunk] of chunks.entries()) {
        const entry = entries[part];
        if (entry)
          for (const cut of chunk) await cutAuditStream(tx, cut, cutoffOfStream.get(cut.stream) ?? cutoff, entry.id);
      }
      return { ...run, tasks, rows, heldTasks, walk, entry: entries[0] ?? null, streamsCut: cuts.length };
    },
    // A run of many tasks is one long transaction; it contends only with holds being placed.
    { timeout: 10 * 60_000 },
  );
}
