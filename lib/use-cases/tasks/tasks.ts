import { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import type { Db } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";
import type { Prisma } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { ArtifactsSchema, emptyGates, IdentitySchema, NewSubtaskSchema, TASK_STATE_SCHEMA_VERSION, type TaskState } from "@/lib/model/tasks/task-state";
import { getLatestWorkflow, workflowNames } from "@/lib/model/workflows";
import { assertValidState } from "@/lib/stores/tasks/task-state-checks";
import { compareAndSwap, findTaskRow, insertTask, recordWriteConflict, replayOrThrow, throwIfLeaseRefused } from "@/lib/stores/tasks/task-store";
import { checkpointTransition, prepareTransition, StaleVersion, transitionResultOf, TransitionInputSchema } from "@/lib/stores/tasks/task-transitions";
import { toTaskView, toTransitionView, type TaskView, type TransitionResult, type TransitionView } from "@/lib/stores/tasks/task-views";

const clientId = clientIdSchema;

export const CreateTaskInputSchema = z.strictObject({
  workflow: z.string().min(1).max(64),
  task_id: clientId.optional(),
  intent_id: clientId,
  subtasks: z.array(NewSubtaskSchema).max(200).optional(),
  artifacts: ArtifactsSchema.optional(),
  budget: z.strictObject({ currency_committed_usd: z.number().finite().min(0).max(1e12) }).optional(),
  active_agents: z.array(IdentitySchema).max(100).optional(),
});
export type CreateTaskInput = z.infer<typeof CreateTaskInputSchema>;

export async function createTask(db: Db, rawInput: unknown, actor: Actor): Promise<{ task: TaskView; created: boolean }> {
  const input = parseOrThrow(CreateTaskInputSchema, rawInput);
  const def = getLatestWorkflow(input.workflow);
  if (!def) {
    throw new AppError("validation_failed", `workflow: unknown workflow; expected one of ${workflowNames.join(", ")}`, {
      errors: [{ field: "workflow", message: `unknown workflow; expected one of ${workflowNames.join(", ")}` }],
    });
  }
  const taskId = input.task_id ?? newId("task");
  const requestDigest = digestOf({ op: "create", ...input, task_id: taskId });
  const now = new Date();
  const state: TaskState = {
    schema_version: TASK_STATE_SCHEMA_VERSION,
    task_id: taskId,
    version: 1,
    status: def.initial,
    gates: { ...emptyGates },
    artifacts: input.artifacts ?? {},
    active_agents: input.active_agents ?? [],
    completed_agents: [],
    failed_agents: [],
    budget: { currency_committed_usd: input.budget?.currency_committed_usd ?? 0, currency_spent_usd: 0, tokens_spent: 0, hops_used: 0 },
    subtasks: input.subtasks ?? [],
    workflow_digest: def.digest,
    intent_id: input.intent_id,
    updated_at: now.toISOString(),
    updated_by: actor.identity,
  };
  assertValidState(def, state);
  try {
    return { task: await insertTask(db, { def, state, actor, requestDigest, createdAt: now }), created: true };
  } catch (error) {
    if (!isUniqueViolation(error) || !input.task_id) throw error;
    // The task id exists: a retry of the same create returns the task, anything else is a conflict.
    const first = await db.transition.findFirst({ where: { taskId, fromVersion: null } });
    if (first?.requestDigest !== requestDigest) {
      throw new AppError("idempotency_conflict", `Task ${taskId} already exists and was created with different parameters.`);
    }
    return { task: await getTaskOrThrow(db, taskId), created: false };
  }
}

export async function transitionTask(db: Db, taskId: string, rawInput: unknown, actor: Actor): Promise<TransitionResult> {
  const input = parseOrThrow(TransitionInputSchema, rawInput);
  const patch = input.patch ?? {};
  const transitionId = input.transition_id ?? newId("tr");
  const requestDigest = digestOf({ op: "transition", task_id: taskId, expected_version: input.expected_version, to: input.to, patch, reason: input.reason });
  try {
    // The read needs no transaction around it: the write below is one
    // statement guarded by `version = expected`, and every write bumps the
    // version, so the state checked here is exactly the state replaced. That
    // is the guarantee a READ COMMITTED transaction gave, in two round trips
    // instead of five (BEGIN, SELECT, UPDATE, INSERT, COMMIT).
    const prepared = await prepareTransition(db, taskId, input, actor, transitionId, requestDigest);
    // At a semantic boundary the checkpoint commits with the change or not
    // at all; everywhere else the single CAS statement stays the whole write.
    const swapped = prepared.checkpointTrigger
      ? await db.$transaction(async (tx) => (await compareAndSwap(tx, prepared.record, input.fencing_token)) && (await checkpointTransition(tx, prepared)))
      : await compareAndSwap(db, prepared.record, input.fencing_token);
    if (!swapped) {
      try {
        await throwIfLeaseRefused(db, taskId, input.expected_version, input.fencing_token, actor);
      } catch (refusal) {
        if (isAppError(refusal) && refusal.code === "lease_conflict") {
          await recordWriteConflict(db, { taskId, actor, kind: "fencing", expectedVersion: input.expected_version, current: null, fencingToken: input.fencing_token });
        }
        throw refusal;
      }
      throw new StaleVersion();
    }
    return transitionResultOf(prepared);
  } catch (error) {
    if (!(error instanceof StaleVersion) && !isUniqueViolation(error)) throw error;
    // A retry of an applied transition lands here (its expected version is
    // now stale, or it raced its twin): answer with the first result.
    if (input.transition_id) {
      const prior = await db.transition.findUnique({ where: { id: input.transition_id } });
      if (prior) return replayOrThrow(db, prior, taskId, requestDigest);
    }
    // Under contention most conflicts are seen on the read above; only a CAS
    // lost between read and write needs another look at the task.
    const latest = error instanceof StaleVersion && error.seen ? error.seen : await findTaskRow(db, taskId);
    if (!latest) throw new AppError("not_found", `Task ${taskId} does not exist.`);
    await recordWriteConflict(db, { taskId, actor, kind: "version", expectedVersion: input.expected_version, current: latest, fencingToken: input.fencing_token });
    throw new AppError(
      "version_conflict",
      `Expected version ${input.expected_version}, but the task is at version ${latest.version} (${latest.status}). Read it again and retry.`,
      { currentVersion: latest.version, currentStatus: latest.status },
    );
  }
}

export async function getTask(db: Db, taskId: string): Promise<TaskView | null> {
  // Agents read before every write: this is half of the hot path.
  const row = await findTaskRow(db, taskId);
  return row ? toTaskView(row) : null;
}

export async function getTaskOrThrow(db: Db, taskId: string): Promise<TaskView> {
  const task = await getTask(db, taskId);
  if (!task) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  return task;
}

export async function getTaskVersion(db: Db, taskId: string): Promise<number | null> {
  const row = await db.task.findUnique({ where: { id: taskId }, select: { version: true } });
  return row?.version ?? null;
}

export const ListTasksQuerySchema = z.strictObject({
  status: z.string().min(1).max(64).optional(),
  workflow: z.string().min(1).max(64).optional(),
  /** Task id or the start of one. */
  q: z.string().trim().min(1).max(128).optional(),
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type ListTasksQuery = z.input<typeof ListTasksQuerySchema>;

export interface TaskPage {
  items: TaskView[];
  /** Opaque; pass back as `cursor` for the next page. Null on the last page. */
  nextCursor: string | null;
}

/**
 * Newest activity first, paged by keyset on (updated_at, id) so page 1,000 is
 * as cheap as page 1: each page is an index range scan, never an OFFSET.
 */
export async function listTasks(db: Db, rawQuery: ListTasksQuery): Promise<TaskPage> {
  const query = parseOrThrow(ListTasksQuerySchema, rawQuery);
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const where: Prisma.TaskWhereInput = {
    ...(query.status ? { status: query.status } : {}),
    ...(query.workflow ? { workflowName: query.workflow } : {}),
    // Prisma sends startsWith as LIKE 'q%' without escaping: "task_" would match "taskX".
    ...(query.q ? { id: { startsWith: escapeLikePattern(query.q) } } : {}),
    ...(after
      ? {
          // The redundant `lte` lets PostgreSQL start the index scan at the cursor.
          updatedAt: { lte: after.updatedAt },
          OR: [{ updatedAt: { lt: after.updatedAt } }, { id: { lt: after.id } }],
        }
      : {}),
  };
  const rows = await db.task.findMany({ where, orderBy: [{ updatedAt: "desc" }, { id: "desc" }], take: query.limit + 1 });
  const items = rows.slice(0, query.limit).map(toTaskView);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > query.limit && last ? encodeCursor(last) : null };
}

export async function countTasksByStatus(db: Db): Promise<Array<{ workflow: string; status: string; count: number }>> {
  const groups = await db.task.groupBy({ by: ["workflowName", "status"], _count: { _all: true } });
  return groups.map((g) => ({ workflow: g.workflowName, status: g.status, count: g._count._all }));
}

export async function listTransitions(db: Db, taskId: string, options: { afterVersion?: number; limit?: number } = {}): Promise<TransitionView[]> {
  const rows = await db.transition.findMany({
    where: { taskId, ...(options.afterVersion !== undefined ? { toVersion: { gt: options.afterVersion } } : {}) },
    orderBy: { toVersion: "asc" },
    take: Math.min(options.limit ?? 500, 1000),
  });
  return rows.map(toTransitionView);
}

/** LIKE's wildcards and its escape character (backslash, PostgreSQL's default), made literal. */
function escapeLikePattern(text: string): string {
  return text.replace(/[\\%_]/g, "\\$&");
}

/** A task page's cursor: the last row's (updated_at, id). */
const taskPageCursor = keysetCursor([keysetParts.instant, keysetParts.text], { notOurs: "not a cursor returned by this API" });

function encodeCursor(task: TaskView): string {
  return taskPageCursor.encode([task.updatedAt, task.id]);
}

function decodeCursor(cursor: string): { updatedAt: Date; id: string } {
  const [updatedAt, id] = taskPageCursor.decode(cursor);
  return { updatedAt, id };
}
