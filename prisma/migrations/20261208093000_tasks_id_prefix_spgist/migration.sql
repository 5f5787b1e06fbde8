-- The global search's task-id prefix, starts_with(id, q), by an SP-GiST index (text_ops serves ^@
-- itself, in any collation) instead of the B-tree with text_pattern_ops of the migration before:
-- Prisma's schema engine reads a B-tree's operator class back wrong (prisma/prisma#17518), so
-- its diff of the migrated database against schema.prisma was never empty, and SP-GiST's default
-- operator class it reads back as written. Same reads (tests/postgres/task-text-filters.test.ts).
-- One transaction with its _prisma_migrations row, as every migration here. Without IF EXISTS and
-- IF NOT EXISTS on purpose: re-run over itself after an interrupted start it fails as applied,
-- and lib/db/migrate.ts confirms it.
DROP INDEX "tasks_id_pattern_idx";
CREATE INDEX "tasks_id_prefix_idx" ON "tasks" USING SPGIST ("id");
