-- The global search finds a call by its customer (docs/search.md). The
-- request holding the customer id is sealed at rest (docs/encryption.md), so
-- SQL cannot compare it: each new call records a keyed blind index of its
-- `/customer_id`, an HMAC under the tenant's data key, and the search compares
-- HMACs. A tenant's deletion destroys its keys, and with them any way to
-- recompute an index. Calls recorded before this column stay unindexed (found
-- by customer only while their request is stored in the clear).
-- The ADD COLUMN, without IF NOT EXISTS on purpose, fails as applied when the
-- script is run again over itself after an interrupted start, and the
-- applier (lib/db/migrate.ts) then confirms it statement by statement.
ALTER TABLE "executions" ADD COLUMN "customer_index" TEXT;
CREATE INDEX IF NOT EXISTS "executions_customer_index_idx" ON "executions"("customer_index");
