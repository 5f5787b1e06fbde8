import { inSpan } from "@/lib/config/tracing";
import type { Db } from "@/lib/db/client";
import type { Task } from "@/lib/generated/prisma/client";
import { AppError, isAppError } from "@/lib/core/errors";
import { newId } from "@/lib/core/ids";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { parseOrThrow } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import type { GateApproval } from "@/lib/model/tasks/transition-rules";
import {
  compareAndSwap,
  findTaskRow,
  forgetTaskRow,
  recordWriteConflict,
  rememberedTaskRow,
  rememberSwappedRow,
  replayOrThrow,
  throwIfLeaseRefused,
} from "@/lib/stores/tasks/task-store";
import {
  checkpointTransition,
  prepareTransition,
  StaleVersion,
  transitionRequestDigest,
  transitionResultOf,
  TransitionInputSchema,
} from "@/lib/stores/tasks/task-transitions";
import type { TransitionResult } from "@/lib/stores/tasks/task-views";

export interface TransitionOptions {
  /** Set only by approveGate, after its checks of the person. */
  gateApproval?: GateApproval;
  /**
   * The caller's check that it may drive this task (an agent's reach,
   * lib/use-cases/authority/require-task-reach.ts), run on the task's row
   * as this use case reads it, before anything about the task is answered:
   * the API's check and the transition share one read.
   */
  reach?: (task: Task) => Promise<unknown>;
}

/** transitionTask as a span of the request's trace (lib/config/tracing.ts). */
export function transitionTask(
  db: Db,
  taskId: string,
  rawInput: unknown,
  actor: Actor,
  options: TransitionOptions = {},
): Promise<TransitionResult> {
  return inSpan("use-case transitionTask", { "verity.task_id": taskId }, () =>
    transitionTaskUntraced(db, taskId, rawInput, actor, options),
  );
}

/**
 * One change of a task on its own: the checks of lib/stores/tasks/task-transitions.ts,
 * then the single CAS statement. A retry of an applied transition id gets
 * the first answer again; a lost CAS is answered version_conflict or
 * lease_conflict, with its write-conflict record.
 */

async function transitionTaskUntraced(
  db: Db,
  taskId: string,
  rawInput: unknown,
  actor: Actor,
  { gateApproval, reach }: TransitionOptions,
): Promise<TransitionResult> {
  const input = parseOrThrow(TransitionInputSchema, rawInput);
  const transitionId = input.transition_id ?? newId("tr");
  const requestDigest = transitionRequestDigest(taskId, input);
  // The row this process wrote last, when the task is still at that
  // version here: an agent driving its task through this server makes
  // one statement per change instead of two. The swap also requires that
  // very row version (its xmin), so a row anyone changed since is never
  // built upon: it is read afresh (the catch below).
  const remembered = rememberedTaskRow(db, taskId, input.expected_version);
  try {
    // The read needs no transaction around it: the write below is one
    // statement guarded by `version = expected`, and every write bumps the
    // version, so the state checked here is exactly the state replaced. That
    // is the guarantee a READ COMMITTED transaction gave, in two round trips
    // instead of five (BEGIN, SELECT, UPDATE, INSERT, COMMIT).
    let row: Task | undefined = remembered?.row;
    if (reach) {
      row ??= (await findTaskRow(db, taskId)) ?? undefined;
      if (!row) throw new AppError("not_found", `Task ${taskId} does not exist.`);
      await reach(row);
    }
    const prepared = await prepareTransition(db, taskId, input, actor, transitionId, requestDigest, gateApproval, row);
    const swapOptions = { unchangedSince: remembered?.xmin };
    // At a semantic boundary the checkpoint commits with the change or not
    // at all; everywhere else the single CAS statement stays the whole write.
    const swapped = prepared.checkpointTrigger
      ? await db.$transaction(async (tx) => {
          const won = await compareAndSwap(tx, prepared.record, input.fencing_token, swapOptions);
          return won && (await checkpointTransition(tx, prepared)) ? won : null;
        })
      : await compareAndSwap(db, prepared.record, input.fencing_token, swapOptions);
    // Lost on the remembered row, not necessarily on the version: nothing was written (the catch reads it again).
    if (!swapped && remembered) throw new StaleVersion();
    if (swapped && prepared.row) rememberSwappedRow(db, prepared.row, prepared.record, swapped);
    if (!swapped) {
      try {
        await throwIfLeaseRefused(db, taskId, input.expected_version, input.fencing_token, actor);
      } catch (refusal) {
        if (isAppError(refusal) && refusal.code === "lease_conflict") {
          await recordWriteConflict(db, {
            taskId,
            actor,
            kind: "fencing",
            expectedVersion: input.expected_version,
            current: null,
            fencingToken: input.fencing_token,
          });
        }
        throw refusal;
      }
      throw new StaleVersion();
    }
    return transitionResultOf(prepared);
  } catch (error) {
    // Lost, or refused, on the remembered row: it may be about a row that is no longer there. Nothing was written,
    // so the answer is worked out again, once, on the row as it is (the same refusal, or the version conflict it
    // really is); an answer worked out on that read is the answer.
    if (remembered && (error instanceof StaleVersion || isAppError(error))) {
      forgetTaskRow(db, taskId);
      return await transitionTaskUntraced(db, taskId, rawInput, actor, { gateApproval, reach });
    }
    if (!(error instanceof StaleVersion) && !isUniqueViolation(error)) throw error;
    // A retry of an applied transition lands here (its expected version is
    // now stale, or it raced its twin): answer with the first result.
    if (input.transition_id) {
      const prior = await db.transition.findFirst({ where: { id: input.transition_id } });
      if (prior) return replayOrThrow(db, prior, taskId, requestDigest);
    }
    // Under contention most conflicts are seen on the read above; only a CAS
    // lost between read and write needs another look at the task.
    const latest = error instanceof StaleVersion && error.seen ? error.seen : await findTaskRow(db, taskId);
    if (!latest) throw new AppError("not_found", `Task ${taskId} does not exist.`);
    await recordWriteConflict(db, {
      taskId,
      actor,
      kind: "version",
      expectedVersion: input.expected_version,
      current: latest,
      fencingToken: input.fencing_token,
    });
    throw new AppError(
      "version_conflict",
      `Expected version ${input.expected_version}, but the task is at version ${latest.version} (${latest.status}). Read it again and retry.`,
      { currentVersion: latest.version, currentStatus: latest.status },
    );
  }
}
