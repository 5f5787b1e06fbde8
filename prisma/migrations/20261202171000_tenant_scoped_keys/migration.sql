-- Keys a caller chooses are unique per tenant, not across tenants: a task id
-- (and what hangs off it: its transitions' (task, version), its lease, its
-- instructions' sequence, its delegations, its executions' (task, tool call)
-- and idempotency key, a LangGraph thread), a transition_id, an
-- instruction_id, a checkpoint_id and restore_id, an inbound event id. Before this, tenant B could not create task "order-1" once
-- tenant A had one, and the refusal told B that it existed: an existence
-- oracle across tenants, and a denial of service.
--
-- The first statement fails when the migration was applied already; every
-- other change is in one block, done only while the tasks' primary key is
-- still the old one: so a start finding this migration unfinished tells, by
-- re-running it, that it was applied (lib/db/migrate.ts). The whole
-- migration is one transaction: the tables are locked while their keys are
-- rebuilt, which takes as long as the largest index.
DROP INDEX "executions_idempotency_key_key";

DO $$
BEGIN
  IF (SELECT array_length(conkey, 1) FROM pg_constraint WHERE conrelid = '"tasks"'::regclass AND contype = 'p') = 1 THEN
    ALTER TABLE "transitions" DROP CONSTRAINT "transitions_task_id_fkey";
    ALTER TABLE "checkpoints" DROP CONSTRAINT "checkpoints_task_id_fkey";

    ALTER TABLE "tasks" DROP CONSTRAINT "tasks_pkey";
    ALTER TABLE "tasks" ADD CONSTRAINT "tasks_pkey" PRIMARY KEY ("tenant_id", "id");

    ALTER TABLE "transitions" DROP CONSTRAINT "transitions_pkey";
    ALTER TABLE "transitions" ADD CONSTRAINT "transitions_pkey" PRIMARY KEY ("tenant_id", "id");
    DROP INDEX "transitions_task_id_to_version_key";
    CREATE UNIQUE INDEX "transitions_tenant_id_task_id_to_version_key" ON "transitions"("tenant_id", "task_id", "to_version");
    ALTER TABLE "transitions" ADD CONSTRAINT "transitions_tenant_id_task_id_fkey" FOREIGN KEY ("tenant_id", "task_id") REFERENCES "tasks"("tenant_id", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

    ALTER TABLE "checkpoints" DROP CONSTRAINT "checkpoints_pkey";
    ALTER TABLE "checkpoints" ADD CONSTRAINT "checkpoints_pkey" PRIMARY KEY ("tenant_id", "id");
    ALTER TABLE "checkpoint_restores" DROP CONSTRAINT "checkpoint_restores_pkey";
    ALTER TABLE "checkpoint_restores" ADD CONSTRAINT "checkpoint_restores_pkey" PRIMARY KEY ("tenant_id", "id");
    ALTER TABLE "checkpoints" ADD CONSTRAINT "checkpoints_tenant_id_task_id_fkey" FOREIGN KEY ("tenant_id", "task_id") REFERENCES "tasks"("tenant_id", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

    ALTER TABLE "leases" DROP CONSTRAINT "leases_pkey";
    ALTER TABLE "leases" ADD CONSTRAINT "leases_pkey" PRIMARY KEY ("tenant_id", "task_id");

    ALTER TABLE "inbox_events" DROP CONSTRAINT "inbox_events_pkey";
    ALTER TABLE "inbox_events" ADD CONSTRAINT "inbox_events_pkey" PRIMARY KEY ("tenant_id", "event_id");

    CREATE UNIQUE INDEX "executions_tenant_id_idempotency_key_key" ON "executions"("tenant_id", "idempotency_key");
    DROP INDEX "executions_task_id_tool_call_id_key";
    CREATE UNIQUE INDEX "executions_tenant_id_task_id_tool_call_id_key" ON "executions"("tenant_id", "task_id", "tool_call_id");

    ALTER TABLE "task_instructions" DROP CONSTRAINT "task_instructions_pkey";
    ALTER TABLE "task_instructions" ADD CONSTRAINT "task_instructions_pkey" PRIMARY KEY ("tenant_id", "id");
    DROP INDEX "task_instructions_task_id_seq_key";
    CREATE UNIQUE INDEX "task_instructions_tenant_id_task_id_seq_key" ON "task_instructions"("tenant_id", "task_id", "seq");

    DROP INDEX "task_delegations_task_id_identity_key";
    CREATE UNIQUE INDEX "task_delegations_tenant_id_task_id_identity_key" ON "task_delegations"("tenant_id", "task_id", "identity");

    ALTER TABLE "graph_threads" DROP CONSTRAINT "graph_threads_pkey";
    ALTER TABLE "graph_threads" ADD CONSTRAINT "graph_threads_pkey" PRIMARY KEY ("tenant_id", "task_id");
    DROP INDEX "graph_threads_namespace_thread_id_key";
    CREATE UNIQUE INDEX "graph_threads_tenant_id_namespace_thread_id_key" ON "graph_threads"("tenant_id", "namespace", "thread_id");

    ALTER TABLE "graph_checkpoints" DROP CONSTRAINT "graph_checkpoints_pkey";
    ALTER TABLE "graph_checkpoints" ADD CONSTRAINT "graph_checkpoints_pkey" PRIMARY KEY ("tenant_id", "task_id", "checkpoint_ns", "checkpoint_id");
    ALTER TABLE "graph_blobs" DROP CONSTRAINT "graph_blobs_pkey";
    ALTER TABLE "graph_blobs" ADD CONSTRAINT "graph_blobs_pkey" PRIMARY KEY ("tenant_id", "task_id", "checkpoint_ns", "channel", "version");
    ALTER TABLE "graph_writes" DROP CONSTRAINT "graph_writes_pkey";
    ALTER TABLE "graph_writes" ADD CONSTRAINT "graph_writes_pkey" PRIMARY KEY ("tenant_id", "task_id", "checkpoint_ns", "checkpoint_id", "graph_task_id", "idx");
  END IF;
END
$$;
