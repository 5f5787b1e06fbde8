-- AlterTable
ALTER TABLE "checkpoint_restores" ADD COLUMN     "xid" BIGINT NOT NULL DEFAULT ((pg_current_xact_id())::text)::bigint;

-- AlterTable
ALTER TABLE "write_conflicts" ADD COLUMN     "xid" BIGINT NOT NULL DEFAULT ((pg_current_xact_id())::text)::bigint;

-- CreateIndex
CREATE INDEX "checkpoint_restores_xid_id_idx" ON "checkpoint_restores"("xid", "id");

-- CreateIndex
CREATE INDEX "write_conflicts_xid_id_idx" ON "write_conflicts"("xid", "id");
