-- CreateTable
CREATE TABLE "graph_threads" (
    "task_id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "thread_id" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "graph_threads_pkey" PRIMARY KEY ("task_id")
);

-- CreateTable
CREATE TABLE "graph_checkpoints" (
    "task_id" TEXT NOT NULL,
    "checkpoint_ns" TEXT NOT NULL,
    "checkpoint_id" TEXT NOT NULL,
    "parent_checkpoint_id" TEXT,
    "forked_from" TEXT,
    "checkpoint_type" TEXT NOT NULL,
    "checkpoint" BYTEA NOT NULL,
    "channel_versions" JSONB NOT NULL,
    "metadata" JSONB NOT NULL,
    "content_digest" TEXT NOT NULL,
    "task_version" INTEGER NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "graph_checkpoints_pkey" PRIMARY KEY ("task_id","checkpoint_ns","checkpoint_id")
);

-- CreateTable
CREATE TABLE "graph_blobs" (
    "task_id" TEXT NOT NULL,
    "checkpoint_ns" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "value_type" TEXT NOT NULL,
    "value" BYTEA NOT NULL,

    CONSTRAINT "graph_blobs_pkey" PRIMARY KEY ("task_id","checkpoint_ns","channel","version")
);

-- CreateTable
CREATE TABLE "graph_writes" (
    "task_id" TEXT NOT NULL,
    "checkpoint_ns" TEXT NOT NULL,
    "checkpoint_id" TEXT NOT NULL,
    "graph_task_id" TEXT NOT NULL,
    "idx" INTEGER NOT NULL,
    "task_path" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "value_type" TEXT NOT NULL,
    "value" BYTEA NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "graph_writes_pkey" PRIMARY KEY ("task_id","checkpoint_ns","checkpoint_id","graph_task_id","idx")
);

-- CreateIndex
CREATE INDEX "graph_threads_namespace_created_by_idx" ON "graph_threads"("namespace", "created_by");

-- CreateIndex
CREATE UNIQUE INDEX "graph_threads_namespace_thread_id_key" ON "graph_threads"("namespace", "thread_id");

-- CreateIndex
CREATE INDEX "graph_checkpoints_task_id_checkpoint_ns_task_version_idx" ON "graph_checkpoints"("task_id", "checkpoint_ns", "task_version" DESC);
