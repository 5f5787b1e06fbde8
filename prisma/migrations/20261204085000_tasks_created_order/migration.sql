-- The task list sorts by creation as well as by last change (issue 13): a
-- keyset page on (created_at, id) is an index range scan like the one on
-- (updated_at, id). created_at never changes after the insert, so this index
-- adds no work to a transition beyond what the row's other indexes cost.
-- Without IF NOT EXISTS on purpose: re-run over itself after an interrupted
-- start it fails as applied, and lib/db/migrate.ts confirms it.
CREATE INDEX "tasks_created_at_id_idx" ON "tasks"("created_at" DESC, "id" DESC);
