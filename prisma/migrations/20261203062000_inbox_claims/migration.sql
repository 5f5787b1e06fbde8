-- The inbox's claims (docs/inbox.md): a person takes an item waiting on
-- people (a review, an escalated task, a gate, an alert) so that others see
-- it is being worked. Advisory: a claim never stands in for a permission or
-- four eyes. One row per item ever claimed, keyed by the item's inbox key
-- ("review:<id>", "task:<id>", "gate:<task id>:<gate>", "alert:<id>");
-- released claims keep their row (claimed_by null) so the version keeps
-- counting and every change is a compare-and-swap on it. Written only by
-- lib/stores/inbox-claims.ts, each change audited. After an interrupted
-- start (lib/db/migrate.ts) the table's CREATE, without IF NOT EXISTS on
-- purpose, fails as applied when run again over itself, and the applier then
-- confirms it statement by statement; the others check what exists first.
CREATE TABLE "inbox_claims" (
    "tenant_id" TEXT NOT NULL DEFAULT verity_current_tenant(),
    "item_key" TEXT NOT NULL,
    -- The task the item belongs to (an alert may have none): task-data
    -- retention deletes a task's claims with the rest of its data.
    "task_id" TEXT,
    "claimed_by" TEXT,
    "claimed_at" TIMESTAMPTZ(3),
    "version" INTEGER NOT NULL DEFAULT 1,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inbox_claims_pkey" PRIMARY KEY ("tenant_id", "item_key"),
    CONSTRAINT "inbox_claims_claimed_together" CHECK (("claimed_by" IS NULL) = ("claimed_at" IS NULL)),
    CONSTRAINT "inbox_claims_version" CHECK ("version" >= 1)
);

CREATE INDEX IF NOT EXISTS "inbox_claims_tenant_id_task_id_idx" ON "inbox_claims" ("tenant_id", "task_id");

ALTER TABLE "inbox_claims" ENABLE ROW LEVEL SECURITY;
DO $$
BEGIN
  CREATE POLICY tenant_isolation ON "inbox_claims"
    USING ("tenant_id" = (SELECT verity_current_tenant()))
    WITH CHECK ("tenant_id" = (SELECT verity_current_tenant()));
EXCEPTION WHEN duplicate_object THEN
  NULL;
END
$$;
GRANT SELECT, INSERT, UPDATE, DELETE ON "inbox_claims" TO verity_app;
