-- CreateEnum
CREATE TYPE "Role" AS ENUM ('operator', 'auditor', 'engineer', 'admin', 'agent');

-- CreateEnum
CREATE TYPE "ActorKind" AS ENUM ('agent', 'user', 'system');

-- CreateTable
CREATE TABLE "tasks" (
    "id" TEXT NOT NULL,
    "workflow_name" TEXT NOT NULL,
    "workflow_version" INTEGER NOT NULL,
    "workflow_digest" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "state" JSONB NOT NULL,
    "intent_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_by" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_by" TEXT NOT NULL,

    CONSTRAINT "tasks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transitions" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "from_version" INTEGER,
    "to_version" INTEGER NOT NULL,
    "from_status" TEXT,
    "to_status" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "actor_kind" "ActorKind" NOT NULL,
    "reason" TEXT,
    "patch" JSONB NOT NULL,
    "state_after" JSONB NOT NULL,
    "request_digest" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "transitions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "role" "Role" NOT NULL,
    "password_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_tokens" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "identity" TEXT NOT NULL,
    "role" "Role" NOT NULL,
    "token_hash" TEXT NOT NULL,
    "token_prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "tasks_updated_at_id_idx" ON "tasks"("updated_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tasks_status_updated_at_id_idx" ON "tasks"("status", "updated_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tasks_workflow_name_updated_at_id_idx" ON "tasks"("workflow_name", "updated_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "transitions_task_id_to_version_key" ON "transitions"("task_id", "to_version");

-- CreateIndex
CREATE UNIQUE INDEX "users_username_key" ON "users"("username");

-- CreateIndex
CREATE UNIQUE INDEX "api_tokens_token_hash_key" ON "api_tokens"("token_hash");

-- AddForeignKey
ALTER TABLE "transitions" ADD CONSTRAINT "transitions_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
