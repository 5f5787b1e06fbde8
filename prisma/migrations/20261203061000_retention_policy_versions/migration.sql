-- A version per class's term, for compare-and-swap from the API and the
-- console (PUT /api/v1/retention/policies/{class} with If-Match or
-- expected_version). A cleared term keeps its row (keep_days NULL) so its
-- version keeps counting: deleting it would start the class at version 1
-- again, and a write based on the first version 1 would then pass against
-- another.
-- (The ADD COLUMN without IF NOT EXISTS on purpose: run again over itself the
-- script fails as applied, and lib/db/migrate.ts then confirms it statement by
-- statement; DROP NOT NULL changes nothing when run again.)
ALTER TABLE "retention_policies" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "retention_policies" ALTER COLUMN "keep_days" DROP NOT NULL;
