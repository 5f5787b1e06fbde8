-- The global search's execution-id prefix, starts_with(id, q), by an SP-GiST index, as the task ids'
-- (migration 20261208093000): `id LIKE 'q%'` read every execution on each keystroke, since the
-- primary key serves no prefix under a collation other than C, and row-level security lets no index
-- serve LIKE (not leakproof); starts_with is, and SP-GiST's default text_ops serves it in any
-- collation (docs/cost-growth.md).
-- One transaction with its _prisma_migrations row, as every migration here. Without IF NOT EXISTS
-- on purpose: re-run over itself after an interrupted start it fails as applied, and
-- lib/db/migrate.ts confirms it.
CREATE INDEX "executions_id_prefix_idx" ON "executions" USING SPGIST ("id");
