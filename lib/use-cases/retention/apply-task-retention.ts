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
import { deleteMessagesOfTask } from "@/lib/stores/messaging";
import { deleteReviewsOfTask } from "@/lib/stores/review-store";
import { deleteInstructionsOfTask } from "@/lib/stores/instructions";
import { deleteDelegationsOfTask } from "@/lib/stores/task-delegations";
import { deleteGraphThreadOfTask } from "@/lib/stores/graph-checkpoints";
import { deleteRestoresOfTask } from "@/lib/use-cases/checkpoints/checkpoint-rows";
import { deleteAlertsOfTask } from "@/lib/use-cases/alerts/divergence";
import { cutAuditStream, MIN_RETENTION_DAYS, planWholeStreamCuts } from "@/lib/use-cases/audit/audit-retention";

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
 * Per tenant and per data class come with those (docs/retention.md): a
 * tenant is one more condition on which tasks a run considers, a class one
 * more input to the cutoff.
 */

/** Counts per table, by table name: what a run removed. */
export type RowCounts = Record<string, number>;

export interface DeletedTask {
  id: string;
  status: string;
  /** When its last activity was (the task, its rows, its audit entries): before the cutoff. */
  lastActivityAt: Date;
  rows: RowCounts;
}

export interface TaskRetentionResult {
  cutoff: Date;
  tasks: DeletedTask[];
  /** Sums over `tasks`, every table named (0 included), so a report shows every store. */
  rows: RowCounts;
  /** Finished tasks old enough that a legal hold kept (at most `maxHeldReported` ids). */
  heldTasks: string[];
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

const MAX_TASKS_PER_RUN = 25;

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
  created_at: Date;
  last_at: Date;
  held: boolean;
}

/**
 * The finished tasks a run may consider, oldest activity first: in a
 * terminal state of their pinned workflow (workflow_versions says which),
 * every trace of them older than the cutoff — the task row, its executions
 * and alerts, its messages, refused writes, lease, audit entries (an
 * annotation added yesterday keeps a task another term) — and nothing left
 * pending: no unsettled execution, undecided review, unresolved alert,
 * undelivered message or open lookup. `held`: an unreleased legal hold
 * covers it (the task itself, or a time range its life overlaps).
 */
async function findFinishedTasks(tx: Tx, cutoff: Date, limit: number): Promise<Candidate[]> {
  const at = cutoff.toISOString();
  return tx.$queryRaw<Candidate[]>`
    WITH finished AS (
      SELECT t.id, t.status, t.created_at, greatest(
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
       WHERE t.updated_at < ${at}::timestamptz
         AND coalesce((v.definition -> 'states' -> t.status ->> 'terminal')::boolean, false)
         AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.task_id = t.id
                          AND x.status::text IN (${Prisma.join(pendingExecutionStatuses)}))
         AND NOT EXISTS (SELECT 1 FROM reviews r JOIN executions x ON x.id = r.execution_id
                          WHERE x.task_id = t.id AND r.status IN ('OPEN', 'ESCALATED'))
         AND NOT EXISTS (SELECT 1 FROM divergence_alerts a WHERE a.task_id = t.id AND a.status IN ('OPEN', 'ESCALATED'))
         AND NOT EXISTS (SELECT 1 FROM outbox_messages o WHERE o.task_id = t.id AND o.delivered_at IS NULL)
         AND NOT EXISTS (SELECT 1 FROM effect_lookups k JOIN executions x ON x.id = k.execution_id
                          WHERE x.task_id = t.id AND k.status IN ('QUEUED', 'CLAIMED'))
    )
    SELECT f.id, f.status, f.created_at, f.last_at,
           EXISTS (SELECT 1 FROM audit_legal_holds h
                    WHERE h.released_at IS NULL
                      AND (h.task_id IS NULL OR h.task_id = f.id)
                      AND (h.from_at IS NULL OR f.last_at >= h.from_at)
                      AND (h.to_at IS NULL OR f.created_at < h.to_at)) AS held
      FROM finished f
     WHERE f.last_at < ${at}::timestamptz
     ORDER BY held, f.last_at, f.id
     LIMIT ${limit + maxHeldReported}`;
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
 * One run: the oldest finished tasks past the cutoff and under no hold, at
 * most `maxTasks`, deleted from every store in one transaction with the
 * run's audit entry. Holds are locked first (as audit retention does), so a
 * hold placed meanwhile is either seen or waits for the run to commit; each
 * task's row is locked and re-checked as not changed since the cutoff, so a
 * restore racing the run either lands first (and the task is kept) or
 * finds no task. A run that finds nothing writes nothing.
 */
export async function applyTaskRetention(
  db: Db,
  rawInput: TaskRetentionInput,
  actor: AuditActor,
  options: {
    cutsPerEntry?: number;
    /** The run's "now" (tests: a task's activity put past the cutoff without waiting days); the database still refuses a cutoff in its future. */
    clock?: () => number;
  } = {},
): Promise<TaskRetentionResult> {
  const input = parseOrThrow(TaskRetentionInputSchema, rawInput);
  const cutoff = new Date((options.clock ?? Date.now)() - input.olderThanDays * 86_400_000);
  const cutsPerEntry = options.cutsPerEntry ?? Number.POSITIVE_INFINITY;
  return db.$transaction(
    async (tx) => {
      await tx.$executeRaw`LOCK TABLE audit_legal_holds IN SHARE MODE`;
      const candidates = await findFinishedTasks(tx, cutoff, input.maxTasks);
      const heldTasks = candidates
        .filter((c) => c.held)
        .slice(0, maxHeldReported)
        .map((c) => c.id);
      const chosen = candidates.filter((c) => !c.held).slice(0, input.maxTasks);
      const locked =
        chosen.length === 0
          ? []
          : await tx.$queryRaw<Array<{ id: string }>>`
              SELECT id FROM tasks WHERE id IN (${Prisma.join(chosen.map((c) => c.id))})
                 AND updated_at < ${cutoff.toISOString()}::timestamptz
               ORDER BY id FOR UPDATE`;
      const lockedIds = new Set(locked.map((r) => r.id));
      const doomed = chosen.filter((c) => lockedIds.has(c.id));
      const rows: RowCounts = Object.fromEntries(taskDataTables.map((t) => [t, 0]));
      if (doomed.length === 0) return { cutoff, tasks: [], rows, heldTasks, entry: null, streamsCut: 0 };

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
        tasks.push({ id: task.id, status: task.status, lastActivityAt: task.last_at, rows: deleted });
        for (const [table, n] of Object.entries(deleted)) rows[table] = (rows[table] ?? 0) + n;
      }

      // The run's entries, then the cuts they record (audit_cut_stream checks the entry exists).
      const summary = {
        scope: "task_data",
        older_than_days: input.olderThanDays,
        cutoff: cutoff.toISOString(),
        tasks: tasks.map((t) => ({
          id: t.id,
          status: t.status,
          last_activity_at: t.lastActivityAt.toISOString(),
          rows: nonZero(t.rows),
        })),
        rows: nonZero(rows),
        held_tasks: heldTasks,
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
      for (const [part, chunk] of chunks.entries()) {
        const entry = entries[part];
        if (entry) for (const cut of chunk) await cutAuditStream(tx, cut, cutoff, entry.id);
      }
      return { cutoff, tasks, rows, heldTasks, entry: entries[0] ?? null, streamsCut: cuts.length };
    },
    // A run of many tasks is one long transaction; it contends only with holds being placed.
    { timeout: 10 * 60_000 },
  );
}

/** Who the scheduled run is in the audit log: the server, not a person. */
export const taskRetentionActor: AuditActor = {
  identity: "spiffe://verity.local/system/task-retention",
  kind: "system",
};

export interface TaskRetentionSchedule {
  olderThanDays: number;
  /** At most one run per this many milliseconds (VERITY_TASK_RETENTION_INTERVAL_MS). */
  everyMs: number;
}

/** Runs one scheduled step may make (25 tasks each): a backlog is worked off over a few ticks, never in one long one. */
const maxRunsPerStep = 20;

/**
 * The background loop's task-retention step, paced like audit retention's
 * (lib/use-cases/audit/audit-retention.ts scheduledRetention): when none ran
 * in this process or `everyMs` has passed since the last attempt, runs one
 * after another (each its own transaction) while each finds a full batch,
 * and answers the runs that deleted something; else null without touching
 * the database. Several processes may each run it: each task's row is
 * locked and re-checked, so a task is deleted once.
 */
export function scheduledTaskRetention(
  schedule: TaskRetentionSchedule,
  clock: () => number = Date.now,
): (db: Db) => Promise<TaskRetentionResult[] | null> {
  let lastAttempt: number | null = null;
  return async (db) => {
    const now = clock();
    if (lastAttempt !== null && now - lastAttempt < schedule.everyMs) return null;
    lastAttempt = now;
    const runs: TaskRetentionResult[] = [];
    for (let i = 0; i < maxRunsPerStep; i++) {
      const run = await applyTaskRetention(db, { olderThanDays: schedule.olderThanDays }, taskRetentionActor);
      if (run.entry) runs.push(run);
      if (run.tasks.length < MAX_TASKS_PER_RUN) break;
    }
    return runs;
  };
}
