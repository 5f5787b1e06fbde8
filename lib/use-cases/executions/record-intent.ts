import { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Prisma, Execution } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { hasOpenDivergence } from "@/lib/use-cases/alerts/divergence";
import { retryableStatuses, succeededStatuses, unresolvedStatuses } from "@/lib/model/executions/execution-rules";
import {
  appendEvent,
  guardOf,
  idempotencyKeyOf,
  moveExecution,
  toExecutionView,
  type ExecutionView,
  type InstructionGuardView,
} from "@/lib/stores/execution-store";
import { transitionTaskInTransaction } from "@/lib/stores/tasks/task-transitions";
import { type TaskView } from "@/lib/stores/tasks/task-views";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { takeCheckpointInTransaction } from "@/lib/stores/checkpoint-store";
import { ToolNameSchema, tools } from "@/lib/model/executions/tools";
import { checkInstructionGuard } from "@/lib/stores/instructions";
import { fencingTokenSchema, jsonObjectSchema } from "@/lib/use-cases/executions/input-fields";
import { freezeBeforeSending } from "@/lib/use-cases/executions/freeze-before-sending";
import { refuseUnlessLeaseCurrent } from "@/lib/use-cases/executions/lease-fencing";

/**
 * The first step of the write-ahead ledger of external side effects (its
 * rows: lib/stores/execution-store.ts).
 *
 *   recordIntent   commits the intent (with the task's move to
 *                  WAITING_FOR_TOOL, one transaction) before anything leaves
 *   markSent       the request is about to leave: from here the outcome is
 *                  uncertain until recorded (mark-sent.ts)
 *   recordOutcome  succeeded (with evidence naming this execution), failed
 *                  (the provider said nothing happened) or unknown
 *                  (record-outcome.ts)
 *
 * A crash between any two steps leaves a record that recovery can read: an
 * INTENT_RECORDED was never sent; a SENT may or may not have happened and is
 * reconciled (lib/use-cases/reconciliation/reconciler.ts) before any irreversible retry.
 */

export const RecordIntentInputSchema = z.strictObject({
  /** The logical call within the task; stable across retries and crashes. */
  tool_call_id: clientIdSchema,
  tool: ToolNameSchema,
  request: jsonObjectSchema,
  /** The task's version: the intent and the task's move to WAITING_FOR_TOOL commit together under CAS. */
  expected_version: z.number().int().min(1),
  fencing_token: fencingTokenSchema.optional(),
  /**
   * The task instruction this call relies on (lib/stores/instructions.ts).
   * An irreversible call whose instruction is no longer the current
   * authorized one on the tool's topic is frozen for review, not sent.
   */
  instruction_id: clientIdSchema.optional(),
});

export type IntentResult =
  /** A receipt exists: skip the call, use the recorded result. */
  | { kind: "receipt"; execution: ExecutionView }
  /** Send the request now, with this idempotency key and attempt id. */
  | { kind: "proceed"; execution: ExecutionView; task: TaskView | null }
  /**
   * Not sent, and never will be unless a person approves: the instruction
   * it relies on is superseded or unauthorized, or the current one forbids
   * it. The execution is NEEDS_HUMAN, the task WAITING_FOR_HUMAN, the review
   * open. `message` says why in words; `task` is null on a replay.
   */
  | {
      kind: "blocked";
      execution: ExecutionView;
      task: TaskView | null;
      reviewId: string;
      message: string;
      guard: InstructionGuardView | null;
    };

export async function recordIntent(db: Db, taskId: string, raw: unknown, actor: Actor): Promise<IntentResult> {
  const input = parseOrThrow(RecordIntentInputSchema, raw);
  const tool = tools[input.tool];
  const request = parseRequest(tool.request, input.request);
  const requestDigest = digestOf({ tool: input.tool, request });
  const existing = await db.execution.findUnique({
    where: { taskId_toolCallId: { taskId, toolCallId: input.tool_call_id } },
  });
  if (existing) return continueExisting(db, existing, input, requestDigest, actor);
  if (tool.irreversible) await refuseWhileDiverged(db, taskId);
  const now = new Date();
  try {
    return await db.$transaction(async (tx): Promise<IntentResult> => {
      const block = tool.irreversible
        ? await checkInstructionGuard(tx, taskId, input.tool, input.instruction_id ?? null)
        : null;
      const { task } = await transitionTaskInTransaction(
        tx,
        taskId,
        block
          ? {
              expected_version: input.expected_version,
              to: "WAITING_FOR_HUMAN",
              fencing_token: input.fencing_token,
              reason: block.message.slice(0, 1000),
            }
          : {
              expected_version: input.expected_version,
              to: "WAITING_FOR_TOOL",
              fencing_token: input.fencing_token,
              reason: `calling ${input.tool} (${input.tool_call_id})`,
            },
        actor,
      );
      const id = newId("exec");
      const row = await tx.execution.create({
        data: {
          id,
          taskId,
          toolCallId: input.tool_call_id,
          attempt: 1,
          attemptId: `${id}.1`,
          idempotencyKey: idempotencyKeyOf(taskId, input.tool_call_id),
          tool: input.tool,
          irreversible: tool.irreversible,
          request: request as Prisma.InputJsonValue,
          requestDigest,
          status: "INTENT_RECORDED",
          version: 1,
          createdBy: actor.identity,
          createdAt: now,
          updatedAt: now,
          instructionId: input.instruction_id ?? null,
          leaseToken: input.fencing_token === undefined ? null : BigInt(input.fencing_token),
        },
      });
      await appendEvent(tx, row, null, "intent recorded", undefined, actor);
      if (block) {
        const frozen = await freezeBeforeSending(tx, row, block, actor);
        return { kind: "blocked", ...frozen, task };
      }
      // The spec's "before deploy / payment / delete" boundary: the checkpoint
      // commits with the intent, so a resume after a crash finds both or neither.
      if (tool.irreversible) await checkpointBeforeEffect(tx, task, actor);
      return { kind: "proceed" as const, execution: toExecutionView(row), task };
    });
  } catch (error) {
    // A twin request created the intent first: answer as a retry of it.
    if (isUniqueViolation(error)) {
      const twin = await db.execution.findUnique({
        where: { taskId_toolCallId: { taskId, toolCallId: input.tool_call_id } },
      });
      if (twin) return continueExisting(db, twin, input, requestDigest, actor);
    }
    throw error;
  }
}

/** The checkpoint taken with an irreversible intent, of the task as the intent left it (WAITING_FOR_TOOL). */
async function checkpointBeforeEffect(tx: Tx, task: TaskView, actor: Actor): Promise<void> {
  await takeCheckpointInTransaction(tx, {
    task: { id: task.id, workflowDigest: task.workflow.digest, intentId: task.intentId, createdBy: task.createdBy },
    state: task.state,
    trigger: "before_irreversible_effect",
    actor,
    createdAt: task.updatedAt,
  });
}

async function continueExisting(
  db: Db,
  existing: Execution,
  input: z.infer<typeof RecordIntentInputSchema>,
  requestDigest: string,
  actor: Actor,
): Promise<IntentResult> {
  if (existing.requestDigest !== requestDigest || existing.tool !== input.tool) {
    throw new AppError(
      "idempotency_conflict",
      `Tool call ${existing.toolCallId} was recorded with a different tool or request; use a new tool_call_id for a different call.`,
    );
  }
  if (succeededStatuses.includes(existing.status)) return { kind: "receipt", execution: toExecutionView(existing) };
  // Frozen before it was ever sent: the same answer as the first time.
  if (existing.status === "NEEDS_HUMAN" && existing.sentAt === null) {
    const replay = await blockedReplay(db, existing);
    if (replay) return replay;
  }
  // Recorded but never sent (the worker died before sending): the current
  // lease holder sends this same attempt; a fenced worker is told to stop
  // now rather than at markSent.
  if (existing.status === "INTENT_RECORDED") {
    if (actor.kind === "agent")
      await refuseUnlessLeaseCurrent(
        db,
        existing.taskId,
        input.fencing_token,
        actor,
        `Attempt ${existing.attemptId} is not yours to send`,
      );
    return { kind: "proceed", execution: toExecutionView(existing), task: null };
  }
  if (unresolvedStatuses.includes(existing.status)) {
    throw new AppError(
      "invariant_violated",
      `The previous attempt of ${existing.tool} (${existing.toolCallId}) is ${existing.status}: its outcome is not known, so it cannot be retried until it is reconciled with the provider.`,
      {
        violations: [
          {
            invariant: "unknown_outcome_reconciled_before_retry",
            message: `Execution ${existing.id} is ${existing.status}.`,
          },
        ],
        executionId: existing.id,
      },
    );
  }
  if (existing.status === "CANCELLED") {
    throw new AppError("invariant_violated", `Execution ${existing.id} was cancelled; it is never retried.`, {
      violations: [{ invariant: "cancelled_execution_final", message: `Execution ${existing.id} is CANCELLED.` }],
    });
  }
  if (!retryableStatuses.includes(existing.status)) throw new Error(`unhandled execution status ${existing.status}`);
  // A known failure: a new attempt with the same idempotency key is safe.
  if (existing.irreversible) await refuseWhileDiverged(db, existing.taskId);
  // A new attempt relies on what it names now (an agent that re-read the ledger), else on what the first one named.
  const instructionId = input.instruction_id ?? existing.instructionId;
  return db.$transaction(async (tx): Promise<IntentResult> => {
    const block = existing.irreversible
      ? await checkInstructionGuard(tx, existing.taskId, input.tool, instructionId)
      : null;
    const { task } = await transitionTaskInTransaction(
      tx,
      existing.taskId,
      block
        ? {
            expected_version: input.expected_version,
            to: "WAITING_FOR_HUMAN",
            fencing_token: input.fencing_token,
            reason: block.message.slice(0, 1000),
          }
        : {
            expected_version: input.expected_version,
            to: "WAITING_FOR_TOOL",
            fencing_token: input.fencing_token,
            reason: `retrying ${existing.tool} (${existing.toolCallId}) after a known failure`,
          },
      actor,
    );
    const attempt = existing.attempt + 1;
    const row = await moveExecution(tx, existing, "INTENT_RECORDED", actor, {
      reason: `attempt ${attempt} after a known failure`,
      data: {
        attempt,
        attemptId: `${existing.id}.${attempt}`,
        error: null,
        sentAt: null,
        settledAt: null,
        instructionId,
        leaseToken: input.fencing_token === undefined ? null : BigInt(input.fencing_token),
      },
    });
    if (block) return { kind: "blocked", ...(await freezeBeforeSending(tx, row, block, actor)), task };
    if (existing.irreversible) await checkpointBeforeEffect(tx, task, actor);
    return { kind: "proceed" as const, execution: toExecutionView(row), task };
  });
}

/** The answer to a retry of an intent the guard froze: the same words, the same review. */
async function blockedReplay(db: Db, existing: Execution): Promise<IntentResult | null> {
  const review = await db.review.findUnique({ where: { executionId: existing.id }, select: { id: true } });
  if (!review) return null;
  const guard = await guardOf(db, existing.id);
  return {
    kind: "blocked",
    execution: toExecutionView(existing),
    task: null,
    reviewId: review.id,
    message: existing.error ?? "frozen for review",
    guard,
  };
}

async function refuseWhileDiverged(db: Db | Tx, taskId: string): Promise<void> {
  if (await hasOpenDivergence(db, taskId)) {
    throw new AppError(
      "invariant_violated",
      `Task ${taskId} has an open divergence alert: nothing irreversible proceeds until it is resolved.`,
      {
        violations: [
          {
            invariant: "no_irreversible_effect_while_diverged",
            message: "Resolve the task's divergence alerts first.",
          },
        ],
      },
    );
  }
}

function parseRequest<S extends z.ZodType>(schema: S, request: unknown): z.infer<S> {
  try {
    return parseOrThrow(schema, request);
  } catch (error) {
    if (error instanceof AppError && error.details.errors) {
      const errors = error.details.errors.map((e) => ({
        field: e.field ? `request.${e.field}` : "request",
        message: e.message,
      }));
      throw new AppError("validation_failed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
    }
    throw error;
  }
}
