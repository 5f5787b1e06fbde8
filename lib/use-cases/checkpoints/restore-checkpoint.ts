import { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { CheckpointRestore } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { keyringOf, type CheckpointOptions } from "@/lib/stores/checkpoint-store";
import { restorePatchOf } from "@/lib/model/checkpoints/checkpoint-restore-rules";
import { fenceLeaseInTransaction } from "@/lib/stores/leases";
import { getTaskOrThrow, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { restoreTaskInTransaction } from "@/lib/stores/tasks/task-transitions";
import type { TaskView, TransitionView } from "@/lib/stores/tasks/task-views";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import type { CheckpointRestoreView, RestorePlan, RestoreRefusal } from "@/lib/model/checkpoints/restore-plan";
import { buildRestorePlan } from "@/lib/use-cases/checkpoints/plan-restore";
import {
  getCheckpointRowOrThrow,
  insertRestore,
  planOf,
  restoreViewOf,
} from "@/lib/use-cases/checkpoints/checkpoint-rows";

export const RestoreInputSchema = z.strictObject({
  /** The task version the plan was read at: a task that moved since is a 409, never a restore over newer state. */
  expected_version: z.number().int().min(1),
  rewind: z.boolean().default(false),
  reason: z.string().trim().min(1, "say why you restore").max(500),
  /** Retrying with the same id returns the first result and writes nothing. */
  restore_id: clientIdSchema.optional(),
});

export interface RestoreResult {
  plan: RestorePlan;
  task: TaskView;
  transition: TransitionView;
  restore: CheckpointRestoreView;
  /** True when this restore_id was already applied: nothing was written now. */
  replayed: boolean;
}

/**
 * Applies a restore as a new transition (version n+1) or refuses it; either
 * way the attempt is recorded in checkpoint_restores, with its plan. Plan,
 * lease fencing, transition and record are one transaction, with the task
 * row locked from the plan to the write, so what was planned is what is
 * applied. Refusals throw: invariant_violated with the refusal code as the
 * invariant (details: restoreId, fallbackCheckpointId), version_conflict
 * when the task is not at expected_version.
 */
export async function restoreCheckpoint(
  db: Db,
  checkpointId: string,
  raw: unknown,
  actor: Actor,
  options: CheckpointOptions = {},
): Promise<RestoreResult> {
  const input = parseOrThrow(RestoreInputSchema, raw);
  const requestDigest = digestOf({
    op: "restore",
    checkpoint_id: checkpointId,
    expected_version: input.expected_version,
    rewind: input.rewind,
    reason: input.reason,
  });
  if (input.restore_id) {
    const prior = await db.checkpointRestore.findFirst({ where: { id: input.restore_id } });
    if (prior) return replayRestore(db, prior, requestDigest);
  }
  const row = await getCheckpointRowOrThrow(db, checkpointId);
  const restoreId = input.restore_id ?? newId("rst");
  const keyring = keyringOf(options);
  type Attempt = { kind: "applied"; result: RestoreResult } | { kind: "refused"; restore: CheckpointRestore };
  let attempt: Attempt;
  try {
    attempt = await db.$transaction(async (tx): Promise<Attempt> => {
      await tx.$queryRaw`SELECT 1 FROM tasks WHERE id = ${row.taskId} FOR UPDATE`;
      const plan = await buildRestorePlan(tx, row, input.rewind, actor, keyring);
      const record = {
        id: restoreId,
        taskId: row.taskId,
        checkpointId: row.id,
        rewind: input.rewind,
        fromVersion: plan.current.version,
        actor,
        reason: input.reason,
        requestDigest,
      };
      if (plan.current.version !== input.expected_version) {
        const refusal: RestoreRefusal = {
          code: "version_conflict",
          message: `Expected version ${input.expected_version}, but the task is at version ${plan.current.version} (${plan.current.status}). Plan again.`,
        };
        return {
          kind: "refused",
          restore: await insertRestore(tx, {
            ...record,
            plan: { ...plan, allowed: false, refusal },
            outcome: "refused",
          }),
        };
      }
      if (!plan.allowed || !plan.resultingState)
        return { kind: "refused", restore: await insertRestore(tx, { ...record, plan, outcome: "refused" }) };
      await fenceLeaseInTransaction(tx, row.taskId);
      const transitionId = newId("tr");
      const applied = await restoreTaskInTransaction(
        tx,
        row.taskId,
        {
          expectedVersion: input.expected_version,
          state: plan.resultingState,
          patch: restorePatchOf(plan.resultingState),
          reason: `restored from checkpoint ${row.id} (version ${row.stateVersion}): ${input.reason}`,
          transitionId,
          requestDigest,
        },
        actor,
      );
      const restore = await insertRestore(tx, {
        ...record,
        plan,
        outcome: "applied",
        toVersion: applied.task.version,
        transitionId,
      });
      return {
        kind: "applied",
        result: {
          plan,
          task: applied.task,
          transition: applied.transition,
          restore: await restoreViewOf(tx, restore),
          replayed: false,
        },
      };
    });
  } catch (error) {
    if (input.restore_id && isUniqueViolation(error)) {
      const twin = await db.checkpointRestore.findFirst({ where: { id: input.restore_id } });
      if (twin) return replayRestore(db, twin, requestDigest);
    }
    throw error;
  }
  if (attempt.kind === "refused") throw await refusalError(db, attempt.restore);
  return attempt.result;
}

async function refusalError(db: Db, row: CheckpointRestore): Promise<AppError> {
  const view = await restoreViewOf(db, row);
  const refusal = view.plan.refusal ?? { code: "invalid_state" as const, message: "The restore was refused." };
  const details = { restoreId: row.id, fallbackCheckpointId: view.plan.fallbackCheckpointId ?? undefined };
  if (refusal.code === "version_conflict") {
    return new AppError("version_conflict", refusal.message, {
      ...details,
      currentVersion: view.plan.current.version,
      currentStatus: view.plan.current.status,
    });
  }
  return new AppError("invariant_violated", refusal.message, {
    ...details,
    violations: [{ invariant: refusal.code, message: refusal.message }],
  });
}

async function replayRestore(db: Db, prior: CheckpointRestore, requestDigest: string): Promise<RestoreResult> {
  const { requestDigest: priorDigest } = await planOf(db, prior);
  if (priorDigest !== requestDigest)
    throw new AppError("idempotency_conflict", `Restore id ${prior.id} was already used for a different request.`);
  if (prior.outcome !== "applied" || prior.toVersion === null) throw await refusalError(db, prior);
  const [transition] = await listTransitions(db, prior.taskId, { afterVersion: prior.toVersion - 1, limit: 1 });
  if (!transition)
    throw new Error(`restore ${prior.id} names version ${prior.toVersion}, which its task does not have`);
  const restore = await restoreViewOf(db, prior);
  return {
    plan: restore.plan,
    task: await getTaskOrThrow(db, prior.taskId, "readable"),
    transition,
    restore,
    replayed: true,
  };
}
