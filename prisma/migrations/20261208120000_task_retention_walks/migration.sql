-- Where each tenant's task-data retention walk stopped (docs/cost-growth.md,
-- "The retention run"). A run judges at most a fixed number of windows of
-- the tasks past its cutoff, in (updated_at, id) order, and the next run
-- resumes after the last task this one read, wrapping to the oldest once it
-- reaches the cutoff: a run's cost is its bound, not every task kept ahead
-- of the deletable ones. One row per tenant; no row, or a row without a
-- position, starts from the oldest. Written only by
-- lib/stores/task-retention-walks.ts, in the transaction of the run's
-- deletions. After an interrupted start (lib/db/migrate.ts) the CREATE,
-- without IF NOT EXISTS on purpose, fails as applied when run again over
-- itself, and the applier then confirms the migration statement by
-- statement (each of the others checks what exists first).
CREATE TABLE "task_retention_walks" (
    "tenant_id" TEXT NOT NULL DEFAULT verity_current_tenant(),
    "after_updated_at" TIMESTAMPTZ(3),
    "after_id" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_retention_walks_pkey" PRIMARY KEY ("tenant_id"),
    CONSTRAINT "task_retention_walks_position" CHECK (("after_updated_at" IS NULL) = ("after_id" IS NULL))
);

ALTER TABLE "task_retention_walks" ENABLE ROW LEVEL SECURITY;
DO $$
BEGIN
  CREATE POLICY tenant_isolation ON "task_retention_walks"
    USING ("tenant_id" = (SELECT verity_current_tenant()))
    WITH CHECK ("tenant_id" = (SELECT verity_current_tenant()));
EXCEPTION WHEN duplicate_object THEN
  NULL;
END
$$;
GRANT SELECT, INSERT, UPDATE, DELETE ON "task_retention_walks" TO verity_app;
