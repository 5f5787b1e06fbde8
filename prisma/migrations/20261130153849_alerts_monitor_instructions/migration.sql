-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "AlertStatus" ADD VALUE 'ACKNOWLEDGED';
ALTER TYPE "AlertStatus" ADD VALUE 'ESCALATED';

-- AlterTable
ALTER TABLE "divergence_alerts" ADD COLUMN     "fingerprint" TEXT,
ADD COLUMN     "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "occurrences" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "review_id" TEXT,
ADD COLUMN     "source" TEXT NOT NULL DEFAULT 'reconciler',
ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "executions" ADD COLUMN     "instruction_id" TEXT;

-- CreateTable
CREATE TABLE "write_conflicts" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "expected_version" INTEGER NOT NULL,
    "current_version" INTEGER,
    "current_status" TEXT,
    "fencing_token" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "write_conflicts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invariant_monitor_runs" (
    "id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "checks" JSONB NOT NULL,
    "violations" INTEGER NOT NULL DEFAULT 0,
    "cursor" JSONB NOT NULL,
    "error" TEXT,

    CONSTRAINT "invariant_monitor_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "task_instructions" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "topic" TEXT NOT NULL,
    "directive" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "issued_by" TEXT NOT NULL,
    "authorized" BOOLEAN NOT NULL,
    "supersedes_id" TEXT,
    "details" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_instructions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "write_conflicts_at_idx" ON "write_conflicts"("at");

-- CreateIndex
CREATE INDEX "write_conflicts_task_id_at_idx" ON "write_conflicts"("task_id", "at");

-- CreateIndex
CREATE INDEX "invariant_monitor_runs_started_at_idx" ON "invariant_monitor_runs"("started_at");

-- CreateIndex
CREATE INDEX "task_instructions_task_id_topic_seq_idx" ON "task_instructions"("task_id", "topic", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "task_instructions_task_id_seq_key" ON "task_instructions"("task_id", "seq");

-- CreateIndex
CREATE INDEX "divergence_alerts_fingerprint_status_idx" ON "divergence_alerts"("fingerprint", "status");

-- CreateIndex
CREATE INDEX "divergence_alerts_created_at_idx" ON "divergence_alerts"("created_at");

-- CreateIndex
CREATE INDEX "executions_task_id_idx" ON "executions"("task_id");

-- CreateIndex
CREATE INDEX "inbox_events_task_id_idx" ON "inbox_events"("task_id");

-- CreateIndex
CREATE INDEX "outbox_messages_task_id_idx" ON "outbox_messages"("task_id");
