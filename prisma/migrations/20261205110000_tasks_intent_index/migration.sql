-- The global search finds an intent typed whole among every task (docs/cost-growth.md): an index
-- lookup, where ILIKE '%…%' over the table read every task. intent_id never changes after the
-- insert. Without IF NOT EXISTS on purpose: re-run over itself after an interrupted start it
-- fails as applied, and lib/db/migrate.ts confirms it.
CREATE INDEX "tasks_intent_id_idx" ON "tasks"("intent_id");
