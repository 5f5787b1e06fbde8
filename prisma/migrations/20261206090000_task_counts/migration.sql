-- Task counts kept as the tasks change (docs/cost-growth.md, "Counts").
--
-- The task list's counts strip and total, and the dashboard's tasks by
-- state and budget by workflow, counted every task on each page view (the
-- budget read every task's state document): O(all tasks). They now read
-- one row per tenant, workflow and status, plus the changes not yet folded
-- into it.
--
-- Why two tables. A counter row updated by every transition's transaction
-- would be the hottest row in the database: every task of a workflow
-- entering the same status would queue on its row lock, serializing the
-- transitions the engine runs side by side. So a changing task only
-- APPENDS its difference to task_count_changes (an insert takes no lock
-- another transaction waits on), in the same transaction as the change,
-- so a committed change is always counted and a rolled-back one never;
-- the background loop folds those rows into task_counts
-- (lib/stores/task-counts.ts), and a read sums both in one statement, so
-- it is exact at its snapshot whether or not a fold has run.
--
-- Written only by the trigger below and by lib/stores/task-counts.ts.
-- After an interrupted start (lib/db/migrate.ts) the CREATEs, without IF
-- NOT EXISTS on purpose, fail as applied when run again over themselves,
-- and the applier then confirms the migration statement by statement.
CREATE TABLE "task_counts" (
    "tenant_id" TEXT NOT NULL DEFAULT verity_current_tenant(),
    "workflow_name" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "tasks" BIGINT NOT NULL DEFAULT 0,
    -- The TaskState budget's numbers, summed exactly (numeric: a float sum
    -- of many additions and subtractions drifts).
    "usd_spent" NUMERIC NOT NULL DEFAULT 0,
    "usd_committed" NUMERIC NOT NULL DEFAULT 0,
    "tokens_spent" NUMERIC NOT NULL DEFAULT 0,

    CONSTRAINT "task_counts_pkey" PRIMARY KEY ("tenant_id", "workflow_name", "status")
);

CREATE TABLE "task_count_changes" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" TEXT NOT NULL DEFAULT verity_current_tenant(),
    "workflow_name" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "tasks" INTEGER NOT NULL,
    "usd_spent" NUMERIC NOT NULL,
    "usd_committed" NUMERIC NOT NULL,
    "tokens_spent" NUMERIC NOT NULL,

    CONSTRAINT "task_count_changes_pkey" PRIMARY KEY ("id")
);

ALTER TABLE "task_counts" ENABLE ROW LEVEL SECURITY;
DO $$
BEGIN
  CREATE POLICY tenant_isolation ON "task_counts"
    USING ("tenant_id" = (SELECT verity_current_tenant()))
    WITH CHECK ("tenant_id" = (SELECT verity_current_tenant()));
EXCEPTION WHEN duplicate_object THEN
  NULL;
END
$$;
ALTER TABLE "task_count_changes" ENABLE ROW LEVEL SECURITY;
DO $$
BEGIN
  CREATE POLICY tenant_isolation ON "task_count_changes"
    USING ("tenant_id" = (SELECT verity_current_tenant()))
    WITH CHECK ("tenant_id" = (SELECT verity_current_tenant()));
EXCEPTION WHEN duplicate_object THEN
  NULL;
END
$$;
GRANT SELECT, INSERT, UPDATE, DELETE ON "task_counts" TO verity_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON "task_count_changes" TO verity_app;
GRANT USAGE, SELECT ON SEQUENCE "task_count_changes_id_seq" TO verity_app;

-- A number of the TaskState budget (TaskState v2 `budget`), 0 when it is
-- absent or not a number: a budget a workflow declared confidential is
-- sealed (a string, docs/encryption.md) and is not summed, as before.
CREATE FUNCTION verity_task_budget(state jsonb, field text) RETURNS numeric
  LANGUAGE sql IMMUTABLE
  AS $$
    SELECT CASE WHEN jsonb_typeof(state -> 'budget' -> field) = 'number'
                THEN (state -> 'budget' ->> field)::numeric ELSE 0 END
  $$;

-- A task's difference to the counts: out of its old (workflow, status) and
-- into its new one, or, staying there, its budget's difference.
CREATE FUNCTION verity_count_task_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "task_count_changes" ("tenant_id", "workflow_name", "status", "tasks", "usd_spent", "usd_committed", "tokens_spent")
    VALUES (NEW.tenant_id, NEW.workflow_name, NEW.status, 1, verity_task_budget(NEW.state, 'currency_spent_usd'),
            verity_task_budget(NEW.state, 'currency_committed_usd'), verity_task_budget(NEW.state, 'tokens_spent'));
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "task_count_changes" ("tenant_id", "workflow_name", "status", "tasks", "usd_spent", "usd_committed", "tokens_spent")
    VALUES (OLD.tenant_id, OLD.workflow_name, OLD.status, -1, -verity_task_budget(OLD.state, 'currency_spent_usd'),
            -verity_task_budget(OLD.state, 'currency_committed_usd'), -verity_task_budget(OLD.state, 'tokens_spent'));
  ELSIF OLD.workflow_name = NEW.workflow_name AND OLD.status = NEW.status THEN
    INSERT INTO "task_count_changes" ("tenant_id", "workflow_name", "status", "tasks", "usd_spent", "usd_committed", "tokens_spent")
    VALUES (NEW.tenant_id, NEW.workflow_name, NEW.status, 0,
            verity_task_budget(NEW.state, 'currency_spent_usd') - verity_task_budget(OLD.state, 'currency_spent_usd'),
            verity_task_budget(NEW.state, 'currency_committed_usd') - verity_task_budget(OLD.state, 'currency_committed_usd'),
            verity_task_budget(NEW.state, 'tokens_spent') - verity_task_budget(OLD.state, 'tokens_spent'));
  ELSE
    INSERT INTO "task_count_changes" ("tenant_id", "workflow_name", "status", "tasks", "usd_spent", "usd_committed", "tokens_spent")
    VALUES (OLD.tenant_id, OLD.workflow_name, OLD.status, -1, -verity_task_budget(OLD.state, 'currency_spent_usd'),
            -verity_task_budget(OLD.state, 'currency_committed_usd'), -verity_task_budget(OLD.state, 'tokens_spent')),
           (NEW.tenant_id, NEW.workflow_name, NEW.status, 1, verity_task_budget(NEW.state, 'currency_spent_usd'),
            verity_task_budget(NEW.state, 'currency_committed_usd'), verity_task_budget(NEW.state, 'tokens_spent'));
  END IF;
  RETURN NULL;
END
$$;

-- Every insert and delete counts; an update only when it moves the task or
-- changes a summed number of its budget. An in-place patch of anything else
-- (a note, a subtask, budget.hops_used) writes nothing here: the trigger's
-- condition is tested on the row, and no function is called.
CREATE TRIGGER "verity_count_tasks_inserted_deleted" AFTER INSERT OR DELETE ON "tasks"
  FOR EACH ROW EXECUTE FUNCTION verity_count_task_change();
CREATE TRIGGER "verity_count_tasks_updated" AFTER UPDATE ON "tasks"
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.workflow_name IS DISTINCT FROM NEW.workflow_name
        OR OLD.state -> 'budget' -> 'currency_spent_usd' IS DISTINCT FROM NEW.state -> 'budget' -> 'currency_spent_usd'
        OR OLD.state -> 'budget' -> 'currency_committed_usd' IS DISTINCT FROM NEW.state -> 'budget' -> 'currency_committed_usd'
        OR OLD.state -> 'budget' -> 'tokens_spent' IS DISTINCT FROM NEW.state -> 'budget' -> 'tokens_spent')
  EXECUTE FUNCTION verity_count_task_change();

-- The tasks there are now, counted once. After the triggers, in the same
-- transaction: CREATE TRIGGER locked the table against writes until this
-- commits, so no task is counted twice or missed.
INSERT INTO "task_counts" ("tenant_id", "workflow_name", "status", "tasks", "usd_spent", "usd_committed", "tokens_spent")
SELECT "tenant_id", "workflow_name", "status", count(*), sum(verity_task_budget("state", 'currency_spent_usd')),
       sum(verity_task_budget("state", 'currency_committed_usd')), sum(verity_task_budget("state", 'tokens_spent'))
  FROM "tasks"
 GROUP BY "tenant_id", "workflow_name", "status";
