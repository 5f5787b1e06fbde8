import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Execution } from "@/lib/generated/prisma/client";
import { succeededStatuses } from "@/lib/model/executions/execution-rules";
import type { ToolDefinition } from "@/lib/model/tools/tool-definition";
import { toolOfExecutionOrThrow } from "@/lib/use-cases/tools/tool-of-execution";
import { findExecution } from "@/lib/stores/execution-store";

/**
 * Compensation (seed 000: "if uncertain, compensate or human-gate"; seed
 * 004's Compensate): undoing a known-succeeded effect through the tool its
 * definition names as its compensating tool. A compensation is its own
 * execution, with its own tool_call_id and so its own idempotency key,
 * linked to the effect (executions.compensates_id) and reconciled like any
 * other call of its tool. The rules, checked in the transaction that
 * records it:
 *   - the effect is on the same task (another task's effect is not named:
 *     the answer is the same as for an id that does not exist);
 *   - it is known to have happened (SUCCEEDED or RECONCILED_SUCCEEDED):
 *     undoing an effect nobody knows happened could itself be the harm;
 *   - the compensating tool is the one the effect's tool version declares;
 *   - at most one compensation per effect (a unique key, so two racing
 *     compensations cannot both be recorded).
 */
export async function refuseUnlessCompensable(
  db: Db | Tx,
  taskId: string,
  effectId: string,
  compensatingTool: ToolDefinition,
): Promise<Execution> {
  const effect = await findExecution(db, { id: effectId });
  if (!effect || effect.taskId !== taskId)
    throw new AppError("validation_failed", `compensates_execution_id: task ${taskId} has no execution ${effectId}.`, {
      errors: [{ field: "compensates_execution_id", message: `task ${taskId} has no execution ${effectId}` }],
    });
  if (!succeededStatuses.includes(effect.status))
    throw violation(
      "compensates_known_success",
      `Execution ${effect.id} is ${effect.status}: only an effect known to have happened (SUCCEEDED or RECONCILED_SUCCEEDED) is compensated. Reconcile it first.`,
    );
  const effectTool = await toolOfExecutionOrThrow(db, effect);
  if (effectTool.compensating_tool !== compensatingTool.name)
    throw violation(
      "compensating_tool_declared",
      effectTool.compensating_tool
        ? `${effect.tool} v${effectTool.version} is compensated by ${effectTool.compensating_tool}, not ${compensatingTool.name}.`
        : `${effect.tool} v${effectTool.version} declares no compensating tool: its effects are not undone by a tool call.`,
    );
  await refuseSecondCompensation(db, effect.id);
  return effect;
}

export async function refuseSecondCompensation(db: Db | Tx, effectId: string): Promise<void> {
  const earlier = await db.execution.findUnique({
    where: { compensatesId: effectId },
    select: { id: true, status: true },
  });
  if (earlier) throw secondCompensation(effectId, earlier.id, earlier.status);
}

function secondCompensation(effectId: string, compensationId: string, status: string): AppError {
  return violation(
    "one_compensation_per_effect",
    `Execution ${effectId} is already compensated by ${compensationId} (${status}); a compensation is retried under its own key, never recorded twice.`,
    { compensation_execution_id: compensationId },
  );
}

function violation(invariant: string, message: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError("invariant_violated", message, { violations: [{ invariant, message }], ...extra });
}
