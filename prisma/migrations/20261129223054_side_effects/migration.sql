-- CreateEnum
CREATE TYPE "ExecutionStatus" AS ENUM ('INTENT_RECORDED', 'SENT', 'SUCCEEDED', 'FAILED', 'OUTCOME_UNKNOWN', 'RECONCILED_SUCCEEDED', 'RECONCILED_FAILED', 'NEEDS_HUMAN', 'CANCELLED');

-- CreateEnum
CREATE TYPE "ReviewStatus" AS ENUM ('OPEN', 'APPROVED', 'REJECTED', 'ESCALATED');

-- CreateEnum
CREATE TYPE "ReviewDecisionKind" AS ENUM ('approve_execute', 'approve_accept_evidence', 'reject', 'escalate');

-- CreateEnum
CREATE TYPE "AlertStatus" AS ENUM ('OPEN', 'RESOLVED');

-- CreateTable
CREATE TABLE "executions" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "tool_call_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "attempt_id" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "irreversible" BOOLEAN NOT NULL,
    "request" JSONB NOT NULL,
    "request_digest" TEXT NOT NULL,
    "status" "ExecutionStatus" NOT NULL,
    "version" INTEGER NOT NULL,
    "result" JSONB,
    "evidence" JSONB,
    "error" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "sent_at" TIMESTAMPTZ(3),
    "settled_at" TIMESTAMPTZ(3),

    CONSTRAINT "executions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "execution_events" (
    "id" TEXT NOT NULL,
    "execution_id" TEXT NOT NULL,
    "attempt_id" TEXT NOT NULL,
    "from_status" "ExecutionStatus",
    "to_status" "ExecutionStatus" NOT NULL,
    "actor" TEXT NOT NULL,
    "reason" TEXT,
    "evidence" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "execution_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "leases" (
    "task_id" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "fencing_token" BIGINT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "acquired_at" TIMESTAMPTZ(3) NOT NULL,
    "renewed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "leases_pkey" PRIMARY KEY ("task_id")
);

-- CreateTable
CREATE TABLE "inbox_events" (
    "event_id" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "task_id" TEXT,
    "payload" JSONB NOT NULL,
    "result" JSONB,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inbox_events_pkey" PRIMARY KEY ("event_id")
);

-- CreateTable
CREATE TABLE "outbox_messages" (
    "id" TEXT NOT NULL,
    "task_id" TEXT,
    "topic" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "available_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "outbox_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reviews" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "execution_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "amount_cents" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "required_approvals" INTEGER NOT NULL,
    "status" "ReviewStatus" NOT NULL,
    "version" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decided_at" TIMESTAMPTZ(3),

    CONSTRAINT "reviews_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "review_decisions" (
    "id" TEXT NOT NULL,
    "review_id" TEXT NOT NULL,
    "kind" "ReviewDecisionKind" NOT NULL,
    "actor" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "review_decisions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "divergence_alerts" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "execution_id" TEXT,
    "kind" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "internal" JSONB NOT NULL,
    "external" JSONB NOT NULL,
    "status" "AlertStatus" NOT NULL,
    "version" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),
    "resolved_by" TEXT,
    "resolution" TEXT,

    CONSTRAINT "divergence_alerts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "executions_idempotency_key_key" ON "executions"("idempotency_key");

-- CreateIndex
CREATE INDEX "executions_status_updated_at_idx" ON "executions"("status", "updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "executions_task_id_tool_call_id_key" ON "executions"("task_id", "tool_call_id");

-- CreateIndex
CREATE INDEX "execution_events_execution_id_created_at_idx" ON "execution_events"("execution_id", "created_at");

-- CreateIndex
CREATE INDEX "outbox_messages_delivered_at_available_at_idx" ON "outbox_messages"("delivered_at", "available_at");

-- CreateIndex
CREATE UNIQUE INDEX "reviews_execution_id_key" ON "reviews"("execution_id");

-- CreateIndex
CREATE INDEX "reviews_status_created_at_idx" ON "reviews"("status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "review_decisions_review_id_actor_key" ON "review_decisions"("review_id", "actor");

-- CreateIndex
CREATE INDEX "divergence_alerts_task_id_status_idx" ON "divergence_alerts"("task_id", "status");

-- CreateIndex
CREATE INDEX "divergence_alerts_status_created_at_idx" ON "divergence_alerts"("status", "created_at");

-- AddForeignKey
ALTER TABLE "execution_events" ADD CONSTRAINT "execution_events_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "executions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "review_decisions" ADD CONSTRAINT "review_decisions_review_id_fkey" FOREIGN KEY ("review_id") REFERENCES "reviews"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
