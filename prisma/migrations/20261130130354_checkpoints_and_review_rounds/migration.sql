-- DropIndex
DROP INDEX "review_decisions_review_id_actor_key";

-- AlterTable
ALTER TABLE "review_decisions" ADD COLUMN     "round" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "reviews" ADD COLUMN     "round" INTEGER NOT NULL DEFAULT 1;

-- CreateTable
CREATE TABLE "checkpoints" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "state_version" INTEGER NOT NULL,
    "schema_version" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "snapshot_digest" TEXT NOT NULL,
    "signature" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_by" TEXT NOT NULL,

    CONSTRAINT "checkpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "checkpoint_restores" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "checkpoint_id" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "rewind" BOOLEAN NOT NULL,
    "from_version" INTEGER NOT NULL,
    "to_version" INTEGER,
    "transition_id" TEXT,
    "refusal" TEXT,
    "plan" JSONB NOT NULL,
    "actor" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkpoint_restores_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "checkpoints_task_id_state_version_idx" ON "checkpoints"("task_id", "state_version");

-- CreateIndex
CREATE INDEX "checkpoints_task_id_created_at_idx" ON "checkpoints"("task_id", "created_at");

-- CreateIndex
CREATE INDEX "checkpoint_restores_task_id_created_at_idx" ON "checkpoint_restores"("task_id", "created_at");

-- CreateIndex
CREATE INDEX "checkpoint_restores_checkpoint_id_idx" ON "checkpoint_restores"("checkpoint_id");

-- CreateIndex
CREATE UNIQUE INDEX "review_decisions_review_id_round_actor_key" ON "review_decisions"("review_id", "round", "actor");

-- AddForeignKey
ALTER TABLE "checkpoints" ADD CONSTRAINT "checkpoints_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
