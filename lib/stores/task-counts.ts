import type { Db } from "@/lib/db/client";

/**
 * The owner of `task_counts` and `task_count_changes` (migration
 * 20261206090000_task_counts; docs/cost-growth.md, "Counts"): how many tasks
 * each workflow has in each status, and their budgets' sums, without
 * counting the tasks.
 *
 * The tasks table's trigger appends each change's difference to
 * `task_count_changes` in the changing transaction (an append takes no lock
 * that another writer waits on, where one counter row per status would
 * serialize every transition into it). `foldTaskCountChanges` moves those
 * rows into `task_counts`, one batch per statement; `readTaskCounts` sums
 * both tables in one statement, so it is exact at its snapshot whether or
 * not a fold has run, and costs the number of (workflow, status) pairs plus
 * the changes not yet folded: never the number of tasks.
 */

export interface TaskCountRow {
  workflow: string;
  status: string;
  tasks: number;
  /** Sums of TaskState v2 `budget` numbers; a sealed (confidential) budget adds nothing. */
  usdSpent: number;
  usdCommitted: number;
  tokensSpent: number;
}

/** The tenant's tasks per workflow and status (pairs with no task left out). */
export async function readTaskCounts(db: Db): Promise<TaskCountRow[]> {
  return db.$queryRaw<TaskCountRow[]>`
    SELECT workflow_name AS workflow, status, sum(tasks)::int AS tasks, sum(usd_spent)::float8 AS "usdSpent",
           sum(usd_committed)::float8 AS "usdCommitted", sum(tokens_spent)::float8 AS "tokensSpent"
      FROM (SELECT workflow_name, status, tasks, usd_spent, usd_committed, tokens_spent FROM task_counts
            UNION ALL
            SELECT workflow_name, status, tasks, usd_spent, usd_committed, tokens_spent FROM task_count_changes) c
     GROUP BY workflow_name, status
    HAVING sum(tasks) <> 0
     ORDER BY workflow_name, status`;
}

/** The changes one fold statement moves at most: a bounded transaction, repeated while there are more. */
const TASK_COUNT_FOLD_BATCH = 10_000;

/**
 * Moves the tenant's changes into the counters, `batch` rows per statement,
 * until fewer than a batch are left or `maxBatches` ran. Each statement
 * deletes its rows and adds their sums in one transaction, so a change is
 * counted once whenever the process dies. Two servers folding at once take
 * different rows (SKIP LOCKED) and meet only on the counter rows, updated
 * in key order. Returns the changes folded.
 */
export async function foldTaskCountChanges(
  db: Db,
  options: { batch?: number; maxBatches?: number } = {},
): Promise<number> {
  const batch = options.batch ?? TASK_COUNT_FOLD_BATCH;
  const maxBatches = options.maxBatches ?? 10;
  let folded = 0;
  for (let i = 0; i < maxBatches; i++) {
    const [row] = await db.$queryRaw<Array<{ n: number }>>`
      WITH batch AS (
        SELECT id FROM task_count_changes ORDER BY id LIMIT ${batch} FOR UPDATE SKIP LOCKED
      ), moved AS (
        DELETE FROM task_count_changes c USING batch WHERE c.id = batch.id
        RETURNING c.tenant_id, c.workflow_name, c.status, c.tasks, c.usd_spent, c.usd_committed, c.tokens_spent
      ), summed AS (
        SELECT tenant_id, workflow_name, status, count(*) AS changes, sum(tasks) AS tasks, sum(usd_spent) AS usd_spent,
               sum(usd_committed) AS usd_committed, sum(tokens_spent) AS tokens_spent
          FROM moved
         GROUP BY tenant_id, workflow_name, status
      ), added AS (
        -- Run to completion whether or not the query below reads it (PostgreSQL's rule for a data-modifying WITH).
        INSERT INTO task_counts AS t (tenant_id, workflow_name, status, tasks, usd_spent, usd_committed, tokens_spent)
        SELECT tenant_id, workflow_name, status, tasks, usd_spent, usd_committed, tokens_spent
          FROM summed
         ORDER BY tenant_id, workflow_name, status
        ON CONFLICT (tenant_id, workflow_name, status) DO UPDATE
          SET tasks = t.tasks + EXCLUDED.tasks, usd_spent = t.usd_spent + EXCLUDED.usd_spent,
              usd_committed = t.usd_committed + EXCLUDED.usd_committed, tokens_spent = t.tokens_spent + EXCLUDED.tokens_spent
      )
      SELECT coalesce(sum(changes), 0)::int AS n FROM summed`;
    const n = row?.n ?? 0;
    folded += n;
    if (n < batch) break;
  }
  return folded;
}
