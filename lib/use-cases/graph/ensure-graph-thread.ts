import type { Db } from "@/lib/db/client";
import { parseOrThrow } from "@/lib/core/validation";
import { EnsureGraphThreadInputSchema, graphThreadTaskId } from "@/lib/model/graph/graph-checkpoint";
import type { Principal } from "@/lib/model/permissions";
import { insertGraphThread } from "@/lib/stores/graph-checkpoints";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { createTaskInScope } from "@/lib/use-cases/authority/create-task-in-scope";

export interface GraphThreadResult {
  namespace: string;
  threadId: string;
  task: TaskView;
  created: boolean;
}

/**
 * A LangGraph thread's Verity task, created on first use: its id derived
 * from (namespace, thread id), so two savers opening the same new thread at
 * once create one task; the create is the tasks API's own (workflow in the
 * token's scope, the caller its owner). Another agent's thread is refused
 * the way a taken task id is, naming nothing of it.
 */
export async function ensureGraphThread(db: Db, principal: Principal, rawInput: unknown): Promise<GraphThreadResult> {
  const input = parseOrThrow(EnsureGraphThreadInputSchema, rawInput);
  const taskId = graphThreadTaskId(input.namespace, input.thread_id);
  const { task, created } = await createTaskInScope(
    db,
    { workflow: input.workflow, task_id: taskId, intent_id: `langgraph-thread:${taskId.slice(3, 19)}` },
    principal,
  );
  // After the task: a thread row always names a task. A crash between the
  // two leaves a task without its row, which the next call completes.
  await insertGraphThread(db, {
    taskId,
    namespace: input.namespace,
    threadId: input.thread_id,
    createdBy: task.createdBy,
  });
  return { namespace: input.namespace, threadId: input.thread_id, task, created };
}
