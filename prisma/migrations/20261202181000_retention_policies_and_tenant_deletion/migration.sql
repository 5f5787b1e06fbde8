-- Retention per tenant and data class, and tenant deletion (docs/retention.md,
-- docs/tenants.md). After an interrupted start (lib/db/migrate.ts) it is told
-- applied statement by statement: each either checks what exists first or
-- fails as "already there".

-- How long each class of a tenant's finished tasks' data is kept: one row per
-- class that has a term (a class without a row is kept forever; a tenant
-- without rows keeps today's behaviour, VERITY_TASK_RETENTION_DAYS). Written
-- only by lib/stores/retention-policies.ts, each change audited.
CREATE TABLE IF NOT EXISTS "retention_policies" (
    "tenant_id" TEXT NOT NULL DEFAULT verity_current_tenant(),
    "data_class" TEXT NOT NULL,
    "keep_days" INTEGER NOT NULL,
    "updated_by" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "retention_policies_pkey" PRIMARY KEY ("tenant_id", "data_class"),
    CONSTRAINT "retention_policies_data_class" CHECK ("data_class" IN ('public', 'internal', 'confidential', 'restricted')),
    CONSTRAINT "retention_policies_keep_days" CHECK ("keep_days" BETWEEN 1 AND 36500)
);

ALTER TABLE "retention_policies" ENABLE ROW LEVEL SECURITY;
DO $$
BEGIN
  CREATE POLICY tenant_isolation ON "retention_policies"
    USING ("tenant_id" = (SELECT verity_current_tenant()))
    WITH CHECK ("tenant_id" = (SELECT verity_current_tenant()));
EXCEPTION WHEN duplicate_object THEN
  NULL;
END
$$;
GRANT SELECT, INSERT, UPDATE, DELETE ON "retention_policies" TO verity_app;

-- A deleted tenant stays in the register: its row is the deletion record that
-- outlives its keys (what was destroyed, when, by whom, why). (Without IF NOT
-- EXISTS on purpose: run again over itself the script fails as applied, and
-- lib/db/migrate.ts then confirms it statement by statement.)
ALTER TABLE "tenants" ADD COLUMN "deleted_at" TIMESTAMPTZ(3);
ALTER TABLE "tenants" ADD COLUMN "deletion" JSONB;
ALTER TABLE "tenants" DROP CONSTRAINT IF EXISTS "tenants_status";
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_status" CHECK ("status" IN ('active', 'suspended', 'deleted'));
