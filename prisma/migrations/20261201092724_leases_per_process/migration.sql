-- Leases per worker process (issue 9): every acquisition gets its own id, and
-- an attempt remembers the lease it was recorded under.

-- AlterTable
ALTER TABLE "executions" ADD COLUMN     "lease_token" BIGINT;

-- AlterTable: existing rows get an id derived from their task and token (unique, stable).
ALTER TABLE "leases" ADD COLUMN     "lease_id" TEXT;
UPDATE "leases" SET "lease_id" = 'lease_' || "task_id" || '_' || "fencing_token"::text WHERE "lease_id" IS NULL;
ALTER TABLE "leases" ALTER COLUMN "lease_id" SET NOT NULL;
