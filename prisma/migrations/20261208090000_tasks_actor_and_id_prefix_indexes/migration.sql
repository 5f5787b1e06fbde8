-- The task list's actor filter (the API's and the exports', which are complete) and the global
-- search's task ids read every task when few matched (docs/cost-growth.md).
-- Every read of tasks runs under row-level security, and PostgreSQL uses an index for a condition
-- only when its operator is leakproof (or the table's policy is checked first): = and starts_with
-- are, LIKE and ILIKE are not, so no index (a pg_trgm one included) serves ILIKE '%q%' here.
-- * (tenant_id, updated_by, updated_at DESC, id DESC): an actor's tasks in the list's order (its
--   whole SPIFFE id is an equality), and the distinct actors of a tenant, read one index descent
--   each, among which a part of one is looked for (lib/use-cases/tasks/list-tasks.ts).
-- * id text_pattern_ops: starts_with(id, q) in any collation; the primary key serves no prefix
--   under a collation other than C (C.UTF-8 included).
-- One transaction with its _prisma_migrations row, as every migration here. Without IF NOT EXISTS
-- on purpose: re-run over itself after an interrupted start it fails as applied, and
-- lib/db/migrate.ts confirms it.
CREATE INDEX "tasks_tenant_id_updated_by_updated_at_id_idx" ON "tasks"("tenant_id", "updated_by", "updated_at" DESC, "id" DESC);
CREATE INDEX "tasks_id_pattern_idx" ON "tasks"("id" text_pattern_ops);
