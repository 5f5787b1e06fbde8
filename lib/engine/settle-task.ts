import type { Tx } from "@/lib/db";
import type { Execution } from "@/lib/generated/prisma/client";
import { raiseIfEffectAfterTaskEnded } from "@/lib/engine/divergence";
import { transitionTaskInTransaction, type Actor, type TaskView } from "@/lib/engine/tasks";
import { getWorkflowByDigest } from "@/lib/engine/workflows";

/**
 * Where a task goes once an execution it waits on is settled by someone other
 * than its worker: the reconciler, a provider's event, a reviewer's decision.
 * Those actors are `system` (or a person), and agent-task v2 gives them their
 * own edges: out of WAITING_FOR_TOOL only through RECONCILING, out of
 * WAITING_FOR_HUMAN only through HUMAN_RESOLVED. Each step is a CAS
 * transition in the caller's transaction.
 */
export type SettlementTarget = "VALIDATING" | "RUNNING" | "WAITING_FOR_HUMAN" | "CANCELLED";

const paths: Record<string, Partial<Record<SettlementTarget, readonly string[]>>> = {
  WAITING_FOR_TOOL: { VALIDATING: ["RECONCILING", "VALIDATING"], RUNNING: ["RECONCILING", "RUNNING"], WAITING_FOR_HUMAN: ["RECONCILING", "WAITING_FOR_HUMAN"] },
  RECONCILING: { VALIDATING: ["VALIDATING"], RUNNING: ["RUNNING"], WAITING_FOR_HUMAN: ["WAITING_FOR_HUMAN"] },
  WAITING_FOR_HUMAN: { VALIDATING: ["HUMAN_RESOLVED", "VALIDATING"], RUNNING: ["HUMAN_RESOLVED", "RUNNING"] },
  HUMAN_RESOLVED: { VALIDATING: ["VALIDATING"], RUNNING: ["RUNNING"] },
};

/**
 * Moves the task of `execution` (as it is after its settlement) towards
 * `target`. A task that is elsewhere (an operator cancelled it, its agent
 * moved on) is left alone: the execution's fact is still recorded, and an
 * irreversible effect that succeeded on a task that already ended is raised
 * as a divergence rather than hidden (the rule of moveTaskAfterTool).
 * Returns the task after the last step, or null when it did not move.
 */
export async function moveTaskAfterSettlement(tx: Tx, execution: Execution, target: SettlementTarget, actor: Actor, reason: string): Promise<TaskView | null> {
  const task = await tx.task.findUnique({ where: { id: execution.taskId }, select: { version: true, status: true, workflowDigest: true } });
  if (!task || task.status === target) return null;
  const def = getWorkflowByDigest(task.workflowDigest);
  const state = def?.states[task.status];
  const path = target === "CANCELLED" ? (state?.terminal ? undefined : ["CANCELLED"]) : paths[task.status]?.[target];
  if (!path || path.length === 0) {
    await raiseIfEffectAfterTaskEnded(tx, execution, { status: task.status, ended: !!state?.terminal && !state.success }, actor);
    return null;
  }
  let version = task.version;
  let moved: TaskView | null = null;
  for (const to of path) {
    moved = (await transitionTaskInTransaction(tx, execution.taskId, { expected_version: version, to, reason: reason.slice(0, 1000) }, actor)).task;
    version = moved.version;
  }
  return moved;
}
