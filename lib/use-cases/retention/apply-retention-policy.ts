import type { Db } from "@/lib/db/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import {
  dataClasses,
  mostSensitive,
  toolDataClass,
  workflowDataClass,
  type DataClass,
} from "@/lib/model/retention/data-classes-held";
import { getRetentionPolicy, type RetentionPolicy } from "@/lib/stores/retention-policies";
import {
  applyTaskRetention,
  MAX_TASKS_PER_RUN,
  type ClassTerms,
  type TaskRetentionResult,
} from "@/lib/use-cases/retention/apply-task-retention";

/**
 * A tenant's retention policy applied (docs/retention.md, "Per tenant and
 * per data class"): a finished task's data is deleted when its last
 * activity is older than the term of the most sensitive class its data
 * holds; a class with no term is kept forever, and so is every task that
 * holds it. The classes come from the tenant's own registries: each
 * workflow version's declaration, each tool's (its most sensitive version,
 * since an execution names the tool, not the version it was checked
 * against); anything undeclared is confidential.
 */

/** The policy's terms with the class of every workflow version and tool the tenant has registered. */
export async function classTermsOf(db: Db, policy: RetentionPolicy): Promise<ClassTerms> {
  const workflows = await db.workflowVersion.findMany({ select: { digest: true, definition: true } });
  const tools = await db.toolVersion.findMany({ select: { name: true, definition: true } });
  const toolClasses = new Map<string, DataClass>();
  for (const tool of tools)
    toolClasses.set(tool.name, mostSensitive([toolClasses.get(tool.name) ?? "public", toolDataClass(tool.definition)]));
  return {
    terms: policy.terms,
    workflowClasses: new Map(workflows.map((w) => [w.digest, workflowDataClass(w.definition)])),
    toolClasses,
  };
}

/** The shortest term the policy sets, or null when it sets none (nothing is ever deleted by it). */
function shortestTerm(policy: RetentionPolicy): number | null {
  const days = dataClasses.map((c) => policy.terms[c]).filter((d): d is number => d !== null);
  return days.length === 0 ? null : Math.min(...days);
}

/**
 * One run of the tenant's policy (at most 25 tasks, one transaction), or
 * null when the tenant has no policy. The run's entry carries the terms and
 * each task's class.
 */
export async function applyRetentionPolicy(
  db: Db,
  actor: AuditActor,
  options: { clock?: () => number; maxTasks?: number } = {},
): Promise<TaskRetentionResult | null> {
  const policy = await getRetentionPolicy(db);
  const shortest = shortestTerm(policy);
  if (shortest === null) return null;
  return applyTaskRetention(db, { olderThanDays: shortest, maxTasks: options.maxTasks }, actor, {
    clock: options.clock,
    classes: await classTermsOf(db, policy),
  });
}

/** Who the scheduled run is in the audit log: the server, not a person. */
export const taskRetentionActor: AuditActor = {
  identity: "spiffe://verity.local/system/task-retention",
  kind: "system",
};

export interface TaskRetentionSchedule {
  /** VERITY_TASK_RETENTION_DAYS: for a tenant without a policy; unset, such a tenant keeps everything. */
  olderThanDays?: number;
  /** At most one run per this many milliseconds (VERITY_AUDIT_RETENTION_INTERVAL_MS). */
  everyMs: number;
}

/** Runs one scheduled step may make (25 tasks each): a backlog is worked off over a few ticks, never in one long one. */
const maxRunsPerStep = 20;

/**
 * Whether a scheduled step makes another run after this one: after a full
 * batch (more may be waiting), and after a run that stopped at its bound
 * before reaching the cutoff (the tasks it passed over were kept, and the
 * deletable ones may lie behind them). Not once the walk has reached the
 * cutoff: the step has then been all the way along, and going round again
 * would read the same kept tasks twice in one tick. So a tick walks on
 * from where the last one stopped to the cutoff, maxRunsPerStep runs at
 * most, where it stopped after the first run that deleted fewer than a
 * batch: 50,000 kept tasks took 25 ticks to get past.
 */
function goesOn(run: TaskRetentionResult): boolean {
  if (run.tasks.length >= MAX_TASKS_PER_RUN) return true;
  return run.walk.stopped === "bound" && !run.walk.reachedCutoff;
}

/**
 * The background loop's task-retention step, paced like audit retention's
 * (lib/use-cases/audit/audit-retention.ts scheduledRetention): when none ran
 * in this process or `everyMs` has passed since the last attempt, runs one
 * after another (each its own transaction) while there may be more to
 * delete before the cutoff (goesOn), and answers the runs that deleted
 * something; else null without touching
 * the database. The tenant's policy, read at each attempt, decides; a
 * tenant without one falls back to `olderThanDays` for every task, as before
 * policies, or keeps everything. Several processes may each run it: each
 * task's row is locked and re-checked, so a task is deleted once.
 */
export function scheduledTaskRetention(
  schedule: TaskRetentionSchedule,
  /** The pace's clock, and the runs' "now" (tests: tasks put past the cutoff without waiting days). */
  clock: () => number = Date.now,
): (db: Db) => Promise<TaskRetentionResult[] | null> {
  let lastAttempt: number | null = null;
  return async (db) => {
    const now = clock();
    if (lastAttempt !== null && now - lastAttempt < schedule.everyMs) return null;
    lastAttempt = now;
    const runs: TaskRetentionResult[] = [];
    for (let i = 0; i < maxRunsPerStep; i++) {
      const run =
        (await applyRetentionPolicy(db, taskRetentionActor, { clock })) ??
        (schedule.olderThanDays
          ? await applyTaskRetention(db, { olderThanDays: schedule.olderThanDays }, taskRetentionActor, { clock })
          : null);
      if (!run) break;
      if (run.entry) runs.push(run);
      if (!goesOn(run)) break;
    }
    return runs;
  };
}
