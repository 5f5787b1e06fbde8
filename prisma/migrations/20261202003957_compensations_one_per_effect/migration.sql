-- AlterEnum
ALTER TYPE "ReviewDecisionKind" ADD VALUE 'approve_compensate';

-- DropIndex
DROP INDEX "executions_compensates_id_idx";

-- CreateIndex
CREATE UNIQUE INDEX "executions_compensates_id_key" ON "executions"("compensates_id");
