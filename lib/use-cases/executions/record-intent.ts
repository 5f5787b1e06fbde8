import { inSpan } from "@/lib/config/tracing";
import { z } from "zod";
import { awaitedLater, inOrder, transactionOn, type Db, type Tx } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import type { Execution, Task } from "@/lib/generated/prisma/client";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { hasOpenDivergence } from "@/lib/use-cases/alerts/divergence";
import { retryableStatuses, succeededStatuses, unresolvedStatuses } from "@/lib/model/executions/execution-rules";
import {
  guardOf,
  startIntentInsert,
  intentDigestOf,
  moveExecution,
  toExecutionView,
  type ExecutionView,
  type InstructionGuardView,
  findExecutionOfCall,
} from "@/lib/stores/execution-store";
import {
  prepareTaskMoveInTransaction,
  RememberedRowChanged,
  transitionTaskInTransaction,
} from "@/lib/stores/tasks/task-transitions";
import { findTaskRow, rememberedTaskRow } from "@/lib/stores/tasks/task-store";
import { type TaskView } from "@/lib/stores/tasks/task-views";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import {
  readCheckpointContext,
  takeCheckpointInTransaction,
  type CheckpointContext,
} from "@/lib/stores/checkpoint-store";
import { builtInDefinitionOf } from "@/lib/model/tools/built-in-tools";
import type { ToolDefinition } from "@/lib/model/tools/tool-definition";
import { ToolNameSchema } from "@/lib/model/tools/tool-name";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { toolsAllowedIn, type WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { ledgerMove } from "@/lib/model/workflows/ledger-states";
import { getToolVersion } from "@/lib/stores/tool-registry";
import { approvalRequestedBlock, checkInstructionGuard } from "@/lib/stores/instructions";
import { fencingTokenSchema, jsonObjectSchema } from "@/lib/use-cases/executions/input-fields";
import { freezeBeforeSending } from "@/lib/use-cases/executions/freeze-before-sending";
import { refuseUnlessLeaseCurrent } from "@/lib/use-cases/executions/lease-fencing";
import { markSent, sendInTransaction, sendingReason } from "@/lib/use-cases/executions/mark-sent";
import { reservationOf } from "@/lib/model/executions/budget-reservation";
import { getTask } from "@/lib/use-cases/tasks/task-queries";
import { refuseUnlessReservationFits } from "@/lib/use-cases/executions/budget-reservation";
import { refuseSecondCompensation, refuseUnlessCompensable } from "@/lib/use-cases/executions/compensation";
import { parseToolRequest, toolForNewIntent } from "@/lib/use-cases/executions/tool-request";

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
  /** A built-in or registered tool (GET /api/v1/tools); its newest version is recorded with the intent. */
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
  /**
   * This call undoes that known-succeeded execution of the same task, whose
   * tool names this tool as its compensating tool (compensation.ts). It is
   * part of the call's identity: a replay must name the same effect.
   */
  compensates_execution_id: clientIdSchema.optional(),
  /**
   * The agent asks a person to approve this call before it is sent (its
   * framework's tool approval): the intent is recorded frozen, NEEDS_HUMAN
   * with a review whose decision releases it (four eyes above the tool's
   * threshold) or cancels it. A retry of the call answers as the review stands.
   */
  approval: z.strictObject({ reason: z.string().trim().min(1, "say why a person should look").max(2000) }).optional(),
  /**
   * The request leaves as soon as this answers: mark the attempt SENT with
   * the intent, in its transaction (markSent's lease rule and instruction
   * guard included), instead of a separate markSent. One commit and one
   * round trip fewer per effect. The price: if this answer is lost, the
   * attempt is SENT, and a retry is told to wait for its reconciliation
   * (a provider lookup) rather than to send it.
   */
  send: z.boolean().optional(),
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

/**
 * The row behind each `proceed` answer whose attempt this process has just
 * inserted, keyed by the answer's view, for as long as the view is held.
 * The engine's own caller (performToolCall) records the outcome on it
 * instead of reading back what it has just written (one statement, and the
 * request's opening, fewer per call); an answer about an attempt recorded
 * before has none, and the outcome reads it as for any caller.
 */
const writtenRows = new WeakMap<ExecutionView, Execution>();

/** The execution row as this process's intent wrote it, behind a `proceed` answer's view (see writtenRows); undefined for any other view. */
export function executionRowWrittenFor(view: ExecutionView): Execution | undefined {
  return writtenRows.get(view);
}

/** recordIntent as a span of the request's trace (lib/config/tracing.ts). */
export function recordIntent(db: Db, taskId: string, raw: unknown, actor: Actor): Promise<IntentResult> {
  return inSpan("use-case recordIntent", { "verity.task_id": taskId }, () =>
    recordIntentUntraced(db, taskId, raw, actor),
  );
}

async function recordIntentUntraced(db: Db, taskId: string, raw: unknown, actor: Actor): Promise<IntentResult> {
  const input = parseOrThrow(RecordIntentInputSchema, raw);
  const result = await recordIntentOf(db, taskId, input, actor);
  // A new attempt was sent in the intent's transaction; one recorded before (never sent, or released by a review) is sent now.
  if (!input.send || result.kind !== "proceed" || result.execution.status !== "INTENT_RECORDED") return result;
  const sent = await markSent(
    db,
    result.execution.id,
    { attempt_id: result.execution.attemptId, fencing_token: input.fencing_token },
    actor,
  );
  return { ...result, execution: sent };
}

type RecordIntentInput = z.infer<typeof RecordIntentInputSchema>;

async function recordIntentOf(db: Db, taskId: string, input: RecordIntentInput, actor: Actor): Promise<IntentResult> {
  // Most calls are new: judged as a new call (its tool's newest version), and
  // confirmed new by the first read of the intent's transaction, so asking
  // costs no round trip of its own. A call recorded before is answered as
  // before, on the version it was recorded under; so is one that the rules
  // for a new call refuse (its tool retired since, say), which may be a
  // recorded call's retry.
  const asNew = await judgedAsNewCall(db, input);
  if (asNew) {
    try {
      return await recordNewIntent(db, taskId, input, actor, asNew, { confirmNew: true });
    } catch (error) {
      if (!(error instanceof RecordedBefore)) throw error;
      return continueRecorded(db, error.existing, input, actor);
    }
  }
  const existing = await findExecutionOfCall(db, taskId, input.tool_call_id);
  if (existing) return continueRecorded(db, existing, input, actor);
  const tool = await toolForNewIntent(db, input.tool);
  return recordNewIntent(db, taskId, input, actor, newCallOf(tool, input), { confirmNew: false });
}

/** A call judged as new: its tool, its request as validated, and the digest a retry is compared by. */
interface NewCall {
  tool: ToolDefinition;
  request: Record<string, unknown>;
  requestDigest: string;
}

function newCallOf(tool: ToolDefinition, input: RecordIntentInput): NewCall {
  const request = parseToolRequest(tool, input.request);
  return { tool, request, requestDigest: intentDigestOf(input.tool, request, input.compensates_execution_id) };
}

/** The call as a new one, or null when the rules for a new call refuse it (recordIntentOf then looks for a recorded one first). */
async function judgedAsNewCall(db: Db, input: RecordIntentInput): Promise<NewCall | null> {
  try {
    return newCallOf(await toolForNewIntent(db, input.tool), input);
  } catch (error) {
    if (isAppError(error)) return null;
    throw error;
  }
}

/** The intent's transaction found the call recorded already: nothing was written, and it is answered as a retry. */
class RecordedBefore extends Error {
  constructor(readonly existing: Execution) {
    super("the call was recorded before");
  }
}

/** A retry of a recorded call: judged by the tool version it was recorded under, even after a newer one or a retirement. */
async function continueRecorded(
  db: Db,
  existing: Execution,
  input: RecordIntentInput,
  actor: Actor,
): Promise<IntentResult> {
  const tool = await toolVersionOf(db, existing.tool, existing.toolVersion, input.tool);
  const { requestDigest } = newCallOf(tool, input);
  return continueExisting(db, existing, input, requestDigest, actor, tool);
}

async function recordNewIntent(
  db: Db,
  taskId: string,
  input: RecordIntentInput,
  actor: Actor,
  { tool, request, requestDigest }: NewCall,
  options: { confirmNew: boolean; onARead?: boolean },
): Promise<IntentResult> {
  const compensates = input.compensates_execution_id;
  const now = new Date();
  try {
    // The task as this process wrote it last, if still at the version the agent names: not read again (its CAS checks it).
    const remembered = options.onARead ? null : rememberedTaskRow(db, taskId, input.expected_version);
    return await transactionOn(db, async (tx): Promise<IntentResult> => {
      // Everything the intent reads before it writes, asked for together
      // (inOrder): one round trip instead of one each. PostgreSQL runs them
      // in this order, so the lease row is held FOR SHARE and the task row
      // FOR KEY SHARE before the guard reads the instructions, as when each
      // was awaited in turn; an error is the first one's in this order.
      // The check that the call is new goes first; if it was recorded before,
      // that decides (a replay gets its receipt whatever the other reads say).
      const recorded = options.confirmNew ? findExecutionOfCall(tx, taskId, input.tool_call_id) : Promise.resolve(null);
      const reads = inOrder([
        tool.irreversible ? refuseWhileDiverged(tx, taskId) : Promise.resolve(),
        input.send ? refuseUnlessMaySend(tx, taskId, input, actor) : Promise.resolve(),
        refuseUnlessAllowedInState(tx, taskId, input.expected_version, tool, remembered?.row),
        compensates ? refuseUnlessCompensable(tx, taskId, compensates, tool) : Promise.resolve(),
        tool.irreversible
          ? checkInstructionGuard(tx, taskId, tool, input.instruction_id ?? null)
          : Promise.resolve(null),
        // For the checkpoint taken with an irreversible intent; a task that does not exist is the CAS's to refuse, in its words.
        tool.irreversible ? readCheckpointContext(tx, taskId).catch(unlessNotFound) : Promise.resolve(undefined),
      ] as const);
      const [existing] = await inOrder([
        recorded,
        reads.then(
          () => undefined,
          () => undefined,
        ),
      ] as const);
      if (existing) throw new RecordedBefore(existing);
      const [, , { def, row: read }, , guarded, checkpointContext] = await reads;
      const block = guarded ?? (input.approval ? approvalRequestedBlock(tool, input.approval.reason) : null);
      // The task's move, the intent and its checkpoint are built first, then
      // sent together in this order (the task's row first, as every writer
      // takes it), and answered in one round trip.
      const move = await prepareTaskMoveInTransaction(
        tx,
        taskId,
        block
          ? {
              expected_version: input.expected_version,
              ...ledgerMove(def, "WAITING_FOR_HUMAN"),
              fencing_token: input.fencing_token,
              reason: block.message.slice(0, 1000),
            }
          : {
              expected_version: input.expected_version,
              ...ledgerMove(def, "WAITING_FOR_TOOL"),
              fencing_token: input.fencing_token,
              reason: `calling ${input.tool} (${input.tool_call_id})`,
            },
        actor,
        {
          row: read,
          unchangedSince: read && remembered && read === remembered.row ? remembered.xmin : undefined,
          rememberOn: db,
        },
      );
      const { task } = move.result;
      const swapped = awaitedLater(move.swap());
      // The reservation commits with the intent and its task CAS, or neither does.
      const reservation = reservationOf(tool, request);
      const fits = awaitedLater(
        reservation
          ? refuseUnlessReservationFits(tx, taskId, task.state.budget.currency_committed_usd, reservation)
          : Promise.resolve(),
      );
      const { row, written } = await startIntentInsert(
        tx,
        {
          taskId,
          toolCallId: input.tool_call_id,
          tool: input.tool,
          toolVersion: tool.version,
          irreversible: tool.irreversible,
          request,
          instructionId: input.instruction_id ?? null,
          leaseToken: input.fencing_token === undefined ? null : BigInt(input.fencing_token),
          reserved: reservation && reservation !== "unreadable" ? reservation : null,
          compensatesId: compensates ?? null,
          reason: compensates ? `intent recorded: compensates ${compensates}` : "intent recorded",
          // Sent with itself: written SENT in the same statement (the lease was checked first in this transaction).
          sent: input.send && !block ? { reason: sendingReason } : undefined,
        },
        actor,
        now,
      );
      if (block) {
        await writesInOrder([swapped, fits, written]);
        const frozen = await freezeBeforeSending(tx, row, block, actor);
        return { kind: "blocked", ...frozen, task };
      }
      // The spec's "before deploy / payment / delete" boundary: the checkpoint
      // commits with the intent, so a resume after a crash finds both or neither.
      await writesInOrder([
        swapped,
        fits,
        written,
        tool.irreversible ? checkpointBeforeEffect(tx, task, actor, checkpointContext) : Promise.resolve(),
      ]);
      const execution = toExecutionView(row);
      writtenRows.set(execution, row);
      return { kind: "proceed" as const, execution, task };
    });
  } catch (error) {
    // The task changed since this process wrote it: nothing was written; the step is made again on a read.
    if (error instanceof RememberedRowChanged && !options.onARead)
      return recordNewIntent(db, taskId, input, actor, { tool, request, requestDigest }, { ...options, onARead: true });
    // A twin request created the intent first: answer as a retry of it.
    if (isUniqueViolation(error)) {
      const twin = await findExecutionOfCall(db, taskId, input.tool_call_id);
      if (twin) return continueExisting(db, twin, input, requestDigest, actor, tool);
      // Or another call compensated the same effect first (executions.compensates_id is unique).
      if (compensates) await refuseSecondCompensation(db, compensates);
    }
    throw error;
  }
}

/** The checkpoint taken with an irreversible intent, of the task as the intent left it (WAITING_FOR_TOOL). */
async function checkpointBeforeEffect(
  tx: Tx,
  task: TaskView,
  actor: Actor,
  /** Read earlier in this transaction (recordIntentOf's reads), else read here. */
  context?: CheckpointContext,
): Promise<void> {
  await takeCheckpointInTransaction(
    tx,
    {
      task: { id: task.id, workflowDigest: task.workflow.digest, intentId: task.intentId, createdBy: task.createdBy },
      state: task.state,
      trigger: "before_irreversible_effect",
      actor,
      createdAt: task.updatedAt,
    },
    { context },
  );
}

/**
 * The intent's writes, sent together, answered as if awaited in turn
 * (inOrder), except that a twin request's unique violation on the intent
 * wins: it is why the task's CAS found another version, and it is answered
 * as a retry of the twin's call (recordNewIntent's catch).
 */
async function writesInOrder(writes: Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(writes);
  const twin = settled.find((s) => s.status === "rejected" && isUniqueViolation(s.reason));
  if (twin?.status === "rejected") throw twin.reason;
  await inOrder(writes);
}

/** A read that found no task answers nothing; the step that needs the task refuses it in its own words. */
function unlessNotFound(error: unknown): undefined {
  if (isAppError(error) && error.code === "not_found") return undefined;
  throw error;
}

async function continueExisting(
  db: Db,
  existing: Execution,
  input: RecordIntentInput,
  requestDigest: string,
  actor: Actor,
  tool: ToolDefinition,
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
    await refuseUnlessStillFits(db, existing, tool);
    const released = await takeUpReleasedCall(db, existing, input, actor, tool);
    if (released) return released;
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
  return transactionOn(db, async (tx): Promise<IntentResult> => {
    if (input.send) await refuseUnlessMaySend(tx, existing.taskId, input, actor);
    const { def, row: read } = await refuseUnlessAllowedInState(tx, existing.taskId, input.expected_version, tool);
    const block = existing.irreversible ? await checkInstructionGuard(tx, existing.taskId, tool, instructionId) : null;
    const { task } = await transitionTaskInTransaction(
      tx,
      existing.taskId,
      block
        ? {
            expected_version: input.expected_version,
            ...ledgerMove(def, "WAITING_FOR_HUMAN"),
            fencing_token: input.fencing_token,
            reason: block.message.slice(0, 1000),
          }
        : {
            expected_version: input.expected_version,
            ...ledgerMove(def, "WAITING_FOR_TOOL"),
            fencing_token: input.fencing_token,
            reason: `retrying ${existing.tool} (${existing.toolCallId}) after a known failure`,
          },
      actor,
      { row: read },
    );
    // The failure released this call's reservation; the new attempt makes it again, against today's limit.
    const reservation = reservationOf(tool, existing.request);
    if (reservation)
      await refuseUnlessReservationFits(
        tx,
        existing.taskId,
        task.state.budget.currency_committed_usd,
        reservation,
        existing.id,
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
    const execution = input.send ? await sendInTransaction(tx, row, input.fencing_token, actor) : row;
    return { kind: "proceed" as const, execution: toExecutionView(execution), task };
  });
}

/**
 * markSent's rule for an intent sent with itself: only the task's current
 * lease may send. Checked first in the transaction, as markSent does, so a
 * takeover waits for this commit and then finds the attempt SENT.
 */
async function refuseUnlessMaySend(tx: Tx, taskId: string, input: RecordIntentInput, actor: Actor): Promise<void> {
  if (actor.kind !== "agent") return;
  await refuseUnlessLeaseCurrent(
    tx,
    taskId,
    input.fencing_token,
    actor,
    `Tool call ${input.tool_call_id} was not sent`,
  );
}

/**
 * A never-sent attempt being resumed holds its reservation already; it is
 * checked again against the commitment as it is now (lowered since, or
 * other calls reserved after a restore), never trusted from before.
 */
async function refuseUnlessStillFits(db: Db, existing: Execution, tool: ToolDefinition): Promise<void> {
  const reservation = reservationOf(tool, existing.request);
  if (!reservation) return;
  const task = await getTask(db, existing.taskId);
  if (!task) return;
  await refuseUnlessReservationFits(
    db,
    existing.taskId,
    task.state.budget.currency_committed_usd,
    reservation,
    existing.id,
  );
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

async function toolVersionOf(db: Db, name: string, version: number | null, asked: string): Promise<ToolDefinition> {
  // A different tool under the same call id is the caller's mistake, answered by continueExisting.
  if (name !== asked) return toolForNewIntent(db, asked);
  const def =
    builtInDefinitionOf(name, version) ?? (version === null ? null : await toolDefinitionOfVersion(db, name, version));
  if (!def) throw new Error(`tool ${name}@${version ?? "?"} of a recorded call is not registered here`);
  return def;
}

async function toolDefinitionOfVersion(db: Db, name: string, version: number): Promise<ToolDefinition | null> {
  return (await getToolVersion(db, name, version))?.definition ?? null;
}

/**
 * The task's workflow may name the tools each state allows
 * (toolsAllowedIn, lib/model/workflows): a call outside them is refused,
 * 422 naming the invariant, before anything is written. Read in the
 * intent's transaction; the task CAS that follows is against the same
 * version, so the state checked is the state the intent leaves.
 */
async function refuseUnlessAllowedInState(
  tx: Tx,
  taskId: string,
  expectedVersion: number,
  tool: ToolDefinition,
  /** The row as this process wrote it (rememberedTaskRow), at expectedVersion: the CAS that follows requires it unchanged. */
  remembered?: Task,
): Promise<{ def: WorkflowDefinition | undefined; row: Task | undefined }> {
  const task = remembered ?? (await findTaskRow(tx, taskId));
  const def = task ? getWorkflowByDigest(task.workflowDigest) : undefined;
  // A missing task or a stale version is the CAS's to refuse, in its own words.
  if (!task || task.version !== expectedVersion || !def) return { def, row: undefined };
  const allowed = toolsAllowedIn(def, task.status);
  // The row read here is the one the intent's move starts from (transitionTaskInTransaction does not read it again).
  if (allowed === "any" || allowed.includes(tool.name)) return { def, row: task };
  // Refused on the remembered row: decided again on the row as it is.
  if (remembered) return refuseUnlessAllowedInState(tx, taskId, expectedVersion, tool);
  throw new AppError(
    "invariant_violated",
    `${tool.name} is not allowed in ${task.status} by workflow ${def.name} v${def.version}${allowed.length ? ` (allowed there: ${allowed.join(", ")})` : " (no tool is allowed there)"}.`,
    {
      violations: [{ invariant: "tool_allowed_in_state", message: `${tool.name} in ${task.status}` }],
      tool: tool.name,
      status: task.status,
    },
  );
}

/**
 * A call a person released to its agent (a registered tool's "approve &
 * execute", lib/use-cases/reviews/decide-review.ts): the attempt waits in
 * INTENT_RECORDED and the task in RUNNING. The agent holding the task
 * takes it up by recording the same intent again: the task moves to
 * WAITING_FOR_TOOL (CAS on its version, the lease's fencing token), and the
 * agent sends the same attempt under the same key. Null when the task is
 * already waiting for it (the ordinary resumed send).
 */
async function takeUpReleasedCall(
  db: Db,
  existing: Execution,
  input: RecordIntentInput,
  actor: Actor,
  tool: ToolDefinition,
): Promise<IntentResult | null> {
  const task = await db.task.findFirst({ where: { id: existing.taskId }, select: { status: true } });
  if (task?.status !== "RUNNING") return null;
  return db.$transaction(async (tx): Promise<IntentResult> => {
    const { task: moved } = await transitionTaskInTransaction(
      tx,
      existing.taskId,
      {
        expected_version: input.expected_version,
        to: "WAITING_FOR_TOOL",
        fencing_token: input.fencing_token,
        reason: `sending ${existing.tool} (${existing.toolCallId}) as released by a review`,
      },
      actor,
    );
    if (tool.irreversible) await checkpointBeforeEffect(tx, moved, actor);
    // The attempt itself does not move: markSent records the sender's lease as it does for any attempt.
    return { kind: "proceed", execution: toExecutionView(existing), task: moved };
  });
}
