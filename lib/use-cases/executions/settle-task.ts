import { isAppError } from "@/lib/core/errors";
import type { Tx } from "@/lib/db/client";
import type { Execution } from "@/lib/generated/prisma/client";
import { raiseIfEffectAfterTaskEnded } from "@/lib/use-cases/alerts/divergence";
import { unresolvedStatuses } from "@/lib/model/executions/execution-rules";
import type { TaskState } from "@/lib/model/tasks/task-state";
import { transitionTaskInTransaction } from "@/lib/stores/tasks/task-transitions";
import { openTaskView, type TaskView } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";
import { evaluateTransition } from "@/lib/model/tasks/transition-rules";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { getWorkflowByDigest } from "@/lib/model/workflows";

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
  WAITING_FOR_TOOL: {
    VALIDATING: ["RECONCILING", "VALIDATING"],
    RUNNING: ["RECONCILING", "RUNNING"],
    WAITING_FOR_HUMAN: ["RECONCILING", "WAITING_FOR_HUMAN"],
  },
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
export async function moveTaskAfterSettlement(
  tx: Tx,
  execution: Execution,
  target: SettlementTarget,
  actor: Actor,
  reason: string,
): Promise<TaskView | null> {
  const task = await tx.task.findFirst({
    where: { id: execution.taskId },
    select: { version: true, status: true, workflowDigest: true },
  });
  if (!task || task.status === target) return null;
  const def = getWorkflowByDigest(task.workflowDigest);
  const state = def?.states[task.status];
  const path = target === "CANCELLED" ? (state?.terminal ? undefined : ["CANCELLED"]) : paths[task.status]?.[target];
  if (!path || path.length === 0) {
    await raiseIfEffectAfterTaskEnded(
      tx,
      execution,
      { status: task.status, ended: !!state?.terminal && !state.success },
      actor,
    );
    return null;
  }
  let version = task.version;
  let moved: TaskView | null = null;
  for (const to of path) {
    moved = (
      await transitionTaskInTransaction(
        tx,
        execution.taskId,
        { expected_version: version, to, reason: reason.slice(0, 1000) },
        actor,
      )
    ).task;
    version = moved.version;
  }
  return moved;
}

/** Where a task went after its execution's recorded failure was corrected to a success (moveTaskAfterCorrection), in words for the history. */
export type CorrectionMove =
  /** Moved on, each step a CAS transition. */
  | { kind: "moved"; task: TaskView; note: string }
  /** Left where it is: already where a success leaves it (its agent continues from the receipt), or waiting on another call. */
  | { kind: "stays"; task: null; note: string }
  /** It could not move on (it had ended, or its workflow has no way): raised for people. */
  | { kind: "to_people"; task: TaskView | null; note: string };

/** Statuses a success leaves a task in, where its agent reads the receipt and carries on. */
const carriesOn = new Set(["RUNNING", "VALIDATING"]);

/**
 * Moves the task of an execution whose recorded failure the provider's
 * record just overturned (lib/use-cases/reconciliation/success-after-failure.ts) on, as a
 * success would have: to VALIDATING (else RUNNING) along the shortest path
 * its workflow lets `actor` take from wherever the failure left it —
 * FAILED → RECOVERING → RECONCILING → VALIDATING, or WAITING_FOR_HUMAN →
 * HUMAN_RESOLVED → VALIDATING — every step checked before any is written.
 *
 * It never moves a task that waits on another call (that call's outcome
 * decides), nor one already RUNNING or VALIDATING (its agent sees the
 * receipt). A task that ended without success (cancelled, given up) cannot
 * move: the effect is raised as effect_after_task_ended, the one rule for
 * an effect on an ended task. A workflow with no way on sends the task to
 * WAITING_FOR_HUMAN if it can, else raises the same alert: never silently.
 */
export async function moveTaskAfterCorrection(
  tx: Tx,
  execution: Execution,
  actor: Actor,
  reason: string,
): Promise<CorrectionMove> {
  const row = await tx.task.findFirst({ where: { id: execution.taskId } });
  if (!row) return { kind: "stays", task: null, note: `task ${execution.taskId} does not exist` };
  const def = getWorkflowByDigest(row.workflowDigest);
  const state = def?.states[row.status];
  if (state?.terminal && state.success) return { kind: "stays", task: null, note: `the task is already ${row.status}` };
  // An effect the task can no longer use: the alert is what tells people (irreversible effects only, as everywhere).
  const raised = execution.irreversible
    ? "raised as effect_after_task_ended for people to decide"
    : "a reversible effect, recorded only";
  if (!def || state?.terminal) {
    await raiseIfEffectAfterTaskEnded(tx, execution, { status: row.status, ended: true }, actor);
    return { kind: "to_people", task: null, note: `the task had ended ${row.status}: ${raised}` };
  }
  const pending = await tx.execution.count({
    where: { taskId: row.id, id: { not: execution.id }, status: { in: ["INTENT_RECORDED", ...unresolvedStatuses] } },
  });
  if (pending > 0)
    return {
      kind: "stays",
      task: null,
      note: `the task is ${row.status} and waits on another call, whose outcome moves it`,
    };
  if (carriesOn.has(row.status))
    return { kind: "stays", task: null, note: `the task is ${row.status}: its agent continues from the receipt` };
  let current: TaskState;
  try {
    current = (await openTaskView(tx, row)).state;
  } catch (error) {
    await raiseIfEffectAfterTaskEnded(tx, execution, { status: row.status, ended: true }, actor);
    return { kind: "to_people", task: null, note: `the task's stored state ${whyUnreadable(error)}: ${raised}` };
  }
  const path =
    pathTo(def, current, ["VALIDATING", "RUNNING"], actor) ?? pathTo(def, current, ["WAITING_FOR_HUMAN"], actor);
  if (!path) {
    await raiseIfEffectAfterTaskEnded(tx, execution, { status: row.status, ended: true }, actor);
    return { kind: "to_people", task: null, note: `workflow ${def.name} has no way on from ${row.status}: ${raised}` };
  }
  let version = row.version;
  let moved: TaskView | null = null;
  for (const to of path) {
    moved = (
      await transitionTaskInTransaction(
        tx,
        row.id,
        { expected_version: version, to, reason: reason.slice(0, 1000) },
        actor,
      )
    ).task;
    version = moved.version;
  }
  const end = path.at(-1);
  return end === "WAITING_FOR_HUMAN"
    ? { kind: "to_people", task: moved, note: `the task had no way on from ${row.status}: WAITING_FOR_HUMAN` }
    : { kind: "moved", task: moved!, note: `the task moved ${[row.status, ...path].join(" → ")}` };
}

/**
 * The shortest sequence of statuses from `current` to the first reachable of
 * `targets` (in order of preference) that `actor` may take, each step
 * evaluated on the state the previous one leaves (guards, invariants), never
 * through a terminal state or a tool call in flight. Null when there is none
 * within four steps.
 */
function pathTo(
  def: WorkflowDefinition,
  current: TaskState,
  targets: readonly string[],
  actor: Actor,
): string[] | null {
  for (const target of targets) {
    let frontier: Array<{ state: TaskState; path: string[] }> = [{ state: current, path: [] }];
    const seen = new Set([current.status]);
    for (let depth = 0; depth < 4 && frontier.length > 0; depth++) {
      const next: typeof frontier = [];
      for (const { state, path } of frontier) {
        for (const edge of def.edges.filter(
          (e) => e.from === state.status && !seen.has(e.to) && e.to !== "WAITING_FOR_TOOL",
        )) {
          if (def.states[edge.to]?.terminal) continue;
          const evaluation = evaluateTransition(def, state, { to: edge.to, patch: {}, actorKind: actor.kind });
          if (!evaluation.ok) continue;
          if (edge.to === target) return [...path, edge.to];
          seen.add(edge.to);
          next.push({ state: evaluation.next, path: [...path, edge.to] });
        }
      }
      frontier = next;
    }
  }
  return null;
}

/** Why a stored task state could not be opened, in words: its key is gone (docs/encryption.md), or it does not parse. */
function whyUnreadable(error: unknown): string {
  return isAppError(error) && error.code === "key_unavailable"
    ? "cannot be opened: an encryption key it needs is not available"
    : "does not parse";
}
