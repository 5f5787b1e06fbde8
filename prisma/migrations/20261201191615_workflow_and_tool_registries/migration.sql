-- CreateEnum
CREATE TYPE "LookupStatus" AS ENUM ('QUEUED', 'CLAIMED', 'ANSWERED', 'EXPIRED');

-- AlterTable
ALTER TABLE "executions" ADD COLUMN     "compensates_id" TEXT,
ADD COLUMN     "reserved_currency" TEXT,
ADD COLUMN     "reserved_minor" INTEGER,
ADD COLUMN     "tool_version" INTEGER;

-- AlterTable
ALTER TABLE "reviews" ALTER COLUMN "amount_cents" DROP NOT NULL,
ALTER COLUMN "currency" DROP NOT NULL,
ALTER COLUMN "customer_id" DROP NOT NULL;

-- CreateTable
CREATE TABLE "workflow_versions" (
    "digest" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "definition" JSONB NOT NULL,
    "built_in" BOOLEAN NOT NULL DEFAULT false,
    "published_by" TEXT NOT NULL,
    "published_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workflow_versions_pkey" PRIMARY KEY ("digest")
);

-- CreateTable
CREATE TABLE "tool_versions" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "definition" JSONB NOT NULL,
    "digest" TEXT NOT NULL,
    "built_in" BOOLEAN NOT NULL DEFAULT false,
    "registered_by" TEXT NOT NULL,
    "registered_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retired_at" TIMESTAMPTZ(3),
    "retired_by" TEXT,

    CONSTRAINT "tool_versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "effect_lookups" (
    "id" TEXT NOT NULL,
    "execution_id" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "status" "LookupStatus" NOT NULL,
    "version" INTEGER NOT NULL,
    "claimed_by" TEXT,
    "fencing_token" INTEGER NOT NULL DEFAULT 0,
    "lease_expires_at" TIMESTAMPTZ(3),
    "deadline_at" TIMESTAMPTZ(3) NOT NULL,
    "answer" JSONB,
    "answered_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "answered_at" TIMESTAMPTZ(3),

    CONSTRAINT "effect_lookups_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "workflow_versions_name_version_key" ON "workflow_versions"("name", "version");

-- CreateIndex
CREATE UNIQUE INDEX "tool_versions_name_version_key" ON "tool_versions"("name", "version");

-- CreateIndex
CREATE INDEX "effect_lookups_tool_status_created_at_idx" ON "effect_lookups"("tool", "status", "created_at");

-- CreateIndex
CREATE INDEX "effect_lookups_execution_id_idx" ON "effect_lookups"("execution_id");

-- CreateIndex
CREATE INDEX "executions_compensates_id_idx" ON "executions"("compensates_id");
