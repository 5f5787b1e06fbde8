import {
  retryableStatuses,
  succeededStatuses,
  unresolvedStatuses,
  type ExecutionStatus,
} from "@/lib/model/executions/execution-rules";
import type { TaskPatch, TaskState } from "@/lib/model/tasks/task-state";
import { checkChangeInvariants, checkStateInvariants } from "@/lib/model/tasks/transition-rules";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import type { PlannedEffect, RestoreEffects, RestoreKind, RestoreRefusal } from "@/lib/model/checkpoints/restore-plan";
import type { IntegrityReport, StateDiffEntry } from "@/lib/model/checkpoints/checkpoint-reports";
import { reservationsOverCommitment, type Reservation } from "@/lib/model/executions/budget-reservation";

/**
 * The rules of a restore, as pure functions over what the database said
 * (buildRestorePlan in lib/use-cases/checkpoints/plan-restore.ts gathers it): which state a restore writes, how
 * each effect of the ledger is treated on resume, and when a restore is
 * refused. A refusal is decided in this order, the first that applies:
 *
 *   corrupt         a check other than workflow compatibility failed
 *   incompatible    the checkpoint's workflow definition is unknown here or
 *                   not the one the task is pinned to
 *   terminal        the task has ended: terminal states never re-enter
 *                   execution (audit phase 4), not even by a restore
 *   current         the checkpoint is of the version the task is at
 *   stale           the checkpoint is older and rewind was not chosen
 *   diverged        a divergence alert is open: internal state is known to
 *                   disagree with a provider, and restoring an internal
 *                   snapshot does not settle that — resolve it first
 *   unreconciled    an effect was sent and its outcome is unknown
 *   awaiting_human  an effect is frozen for people (NEEDS_HUMAN, open review)
 *   invalid_state   the state the restore would write breaks an invariant
 *
 * Why uncertain effects block: the restored state could let the task move
 * past them — from a snapshot taken before RECONCILING, an agent could
 * validate and complete while the refund's outcome is still unknown; from
 * one before WAITING_FOR_HUMAN, the review's decision would find the task
 * gone. Settled effects never block: a receipt is answered on resume
 * instead of a second call (recordIntent), and a known failure is retried
 * with the same idempotency key, which the provider applies at most once.
 */

export function classifyEffects(
  executions: readonly PlannedEffectSource[],
  undecidedReviewExecutionIds: ReadonlySet<string>,
): RestoreEffects {
  const effects: RestoreEffects = {
    skippedByReceipt: [],
    needsReconciliation: [],
    needsHuman: [],
    retrySameKey: [],
    cancelled: [],
  };
  for (const e of executions) {
    const item = (action: string): PlannedEffect => ({
      executionId: e.id,
      toolCallId: e.toolCallId,
      tool: e.tool,
      irreversible: e.irreversible,
      status: e.status,
      idempotencyKey: e.idempotencyKey,
      action,
    });
    const category = categoryOf(e.status, undecidedReviewExecutionIds.has(e.id));
    switch (category) {
      case "receipt":
        effects.skippedByReceipt.push(item("skipped on resume: the receipt is returned, the tool is not called again"));
        break;
      case "reconcile":
        effects.needsReconciliation.push(
          item("outcome unknown: the reconciler asks the provider before anything is retried"),
        );
        break;
      case "human":
        effects.needsHuman.push(item("frozen: decided in the review queue"));
        break;
      case "retry":
        effects.retrySameKey.push(
          item(
            e.status === "INTENT_RECORDED"
              ? "never sent: resuming sends it, with the same idempotency key"
              : "failed for certain: a new attempt with the same idempotency key is safe",
          ),
        );
        break;
      case "cancelled":
        effects.cancelled.push(item("cancelled: never retried"));
        break;
    }
  }
  return effects;
}

export interface PlannedEffectSource {
  id: string;
  toolCallId: string;
  tool: string;
  irreversible: boolean;
  status: ExecutionStatus;
  idempotencyKey: string;
}

type EffectCategory = "receipt" | "reconcile" | "human" | "retry" | "cancelled";

function categoryOf(status: ExecutionStatus, hasUndecidedReview: boolean): EffectCategory {
  if (hasUndecidedReview || status === "NEEDS_HUMAN") return "human";
  if (succeededStatuses.includes(status)) return "receipt";
  if (unresolvedStatuses.includes(status)) return "reconcile";
  if (retryableStatuses.includes(status) || status === "INTENT_RECORDED") return "retry";
  if (status === "CANCELLED") return "cancelled";
  // Exhaustive over ExecutionStatus: a new status must be placed above.
  throw new Error(`unclassified execution status ${status}`);
}

/**
 * The state a restore writes (version, updated_at and updated_by are set by
 * the task store's CAS). From the snapshot: status, gates, artifacts, agents,
 * subtasks. Never from the snapshot: the budget commitment (re-read) and
 * consumption below what is known now — money spent stays spent, so each
 * consumed field is the greater of the two. Subtasks added since the
 * checkpoint stay (a subtask is never removed), and a mandatory flag stays.
 */
export function resultingStateOf(snapshot: TaskState, current: TaskState): TaskState {
  const snapshotIds = new Set(snapshot.subtasks.map((s) => s.id));
  const currentById = new Map(current.subtasks.map((s) => [s.id, s]));
  const subtasks = [
    ...snapshot.subtasks.map((s) => ({ ...s, mandatory: s.mandatory || currentById.get(s.id)?.mandatory === true })),
    ...current.subtasks.filter((s) => !snapshotIds.has(s.id)).map((s) => ({ ...s })),
  ];
  return {
    ...snapshot,
    task_id: current.task_id,
    version: current.version,
    workflow_digest: current.workflow_digest,
    intent_id: current.intent_id,
    updated_at: current.updated_at,
    updated_by: current.updated_by,
    budget: {
      currency_committed_usd: current.budget.currency_committed_usd,
      currency_spent_usd: Math.max(current.budget.currency_spent_usd, snapshot.budget.currency_spent_usd),
      tokens_spent: Math.max(current.budget.tokens_spent, snapshot.budget.tokens_spent),
      hops_used: Math.max(current.budget.hops_used, snapshot.budget.hops_used),
    },
    subtasks,
  };
}

/** The restore as a TaskPatch for the transition log (state_after holds the exact state). */
export function restorePatchOf(state: TaskState): TaskPatch {
  return {
    gates: state.gates,
    artifacts: state.artifacts,
    active_agents: state.active_agents,
    completed_agents: state.completed_agents,
    failed_agents: state.failed_agents,
    budget: state.budget,
    subtasks: state.subtasks,
  };
}

export interface RestoreDecisionInput {
  integrity: IntegrityReport;
  def: WorkflowDefinition;
  current: TaskState;
  checkpointVersion: number;
  /** Null when the snapshot could not be read. */
  snapshot: TaskState | null;
  rewind: boolean;
  hasOpenDivergence: boolean;
  effects: RestoreEffects;
  /**
   * The task's live reservations now (its execution rows, never the
   * checkpoint's budget_consumed): the restored task resumes with them, so
   * they must fit the current commitment. Absent: none.
   */
  liveReservations?: readonly Reservation[];
}

export interface RestoreDecision {
  kind: RestoreKind;
  refusal: RestoreRefusal | null;
  resultingState: TaskState | null;
}

export function decideRestore(input: RestoreDecisionInput): RestoreDecision {
  const { integrity, def, current, checkpointVersion, snapshot } = input;
  const failed = integrity.checks.filter((c) => !c.ok);
  const kind: RestoreKind =
    checkpointVersion < current.version ? "rewind" : checkpointVersion > current.version ? "roll_forward" : "none";
  const refuse = (code: RestoreRefusal["code"], message: string): RestoreDecision => ({
    kind,
    refusal: { code, message },
    resultingState: null,
  });

  const corrupt = failed.filter((c) => c.check !== "workflow_compatible");
  if (corrupt.length > 0 || !snapshot) {
    return refuse(
      "corrupt",
      `The checkpoint does not verify: ${corrupt.map((c) => `${c.check} FAILED (${c.message})`).join("; ") || "its snapshot is unreadable"}.`,
    );
  }
  const incompatible = failed.find((c) => c.check === "workflow_compatible");
  if (incompatible)
    return refuse("incompatible", `The checkpoint's workflow definition cannot be used: ${incompatible.message}.`);
  if (def.states[current.status]?.terminal) {
    return refuse(
      "terminal",
      `The task is ${current.status}, a terminal state: a finished task never re-enters execution, not even by a restore.`,
    );
  }
  if (kind === "none")
    return refuse(
      "current",
      `The task is at version ${current.version}, the checkpoint's own version: there is nothing to restore.`,
    );
  if (kind === "rewind" && !input.rewind) {
    return refuse(
      "stale",
      `The checkpoint is of version ${checkpointVersion}, older than the committed version ${current.version}: restoring it would overwrite newer state. An engineer may choose to rewind explicitly.`,
    );
  }
  if (input.hasOpenDivergence) {
    return refuse(
      "diverged",
      "The task has an open divergence alert: internal state disagrees with a provider. Resolve the alert before restoring.",
    );
  }
  if (input.effects.needsReconciliation.length > 0) {
    const ids = input.effects.needsReconciliation.map((e) => `${e.tool} (${e.toolCallId}, ${e.status})`).join(", ");
    return refuse(
      "unreconciled",
      `Effect(s) with an unknown outcome: ${ids}. They are reconciled with the provider before the task may be restored.`,
    );
  }
  if (input.effects.needsHuman.length > 0) {
    const ids = input.effects.needsHuman.map((e) => `${e.tool} (${e.toolCallId})`).join(", ");
    return refuse(
      "awaiting_human",
      `Effect(s) frozen for a person's decision: ${ids}. Decide them in the review queue before restoring.`,
    );
  }
  const resulting = resultingStateOf(snapshot, current);
  const overBudget = reservationsOverCommitment(resulting.budget.currency_committed_usd, input.liveReservations ?? []);
  const violations = [
    ...checkStateInvariants(def, resulting),
    ...checkChangeInvariants(current, resulting),
    ...(overBudget ? [overBudget] : []),
  ];
  if (violations.length > 0) {
    return refuse(
      "invalid_state",
      `The restored state would break: ${violations.map((v) => `${v.invariant} (${v.message})`).join("; ")}`,
    );
  }
  return { kind, refusal: null, resultingState: resulting };
}

/**
 * before → after, member by member. Objects recurse; lists of objects with
 * an `id` (subtasks) are matched by id; other lists compare as a whole.
 */
export function diffStates(before: unknown, after: unknown, path = ""): StateDiffEntry[] {
  if (isRecord(before) && isRecord(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => {
      const at = path ? `${path}.${key}` : key;
      if (!(key in after) || after[key] === undefined)
        return before[key] === undefined ? [] : [{ path: at, kind: "removed" as const, before: before[key] }];
      if (!(key in before) || before[key] === undefined)
        return [{ path: at, kind: "added" as const, after: after[key] }];
      return diffStates(before[key], after[key], at);
    });
  }
  if (isIdList(before) && isIdList(after) && before.length + after.length > 0) {
    const beforeById = new Map(before.map((item) => [item.id, item]));
    const afterById = new Map(after.map((item) => [item.id, item]));
    const ids = [...new Set([...beforeById.keys(), ...afterById.keys()])];
    return ids.flatMap((id) => {
      const at = `${path}[${id}]`;
      const b = beforeById.get(id);
      const a = afterById.get(id);
      if (!a) return [{ path: at, kind: "removed" as const, before: b }];
      if (!b) return [{ path: at, kind: "added" as const, after: a }];
      return diffStates(b, a, at);
    });
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path, kind: "changed", before, after }];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

function isIdList(value: unknown): value is Array<{ id: string } & Record<string, unknown>> {
  return Array.isArray(value) && value.every((item) => isRecord(item) && typeof item.id === "string");
}

/**
 * The shortest way from `from` to a terminal failure state along edges the
 * actor may take: how a task with no valid checkpoint to resume from is
 * ended, with an audit record, instead of resumed from poison. A state named
 * like a failure is preferred; another terminal non-success state (e.g.
 * cancelled) only when no failure state can be reached. Null: no path.
 */
export function pathToFailure(
  def: WorkflowDefinition,
  from: string,
  actorKind: "agent" | "user" | "system",
): string[] | null {
  const isFailure = (s: string) => def.states[s]?.terminal === true && !def.states[s]?.success && /fail/i.test(s);
  const isOtherEnd = (s: string) => def.states[s]?.terminal === true && !def.states[s]?.success;
  for (const goal of [isFailure, isOtherEnd]) {
    const previous = new Map<string, string>([[from, ""]]);
    const queue = [from];
    while (queue.length > 0) {
      const at = queue.shift()!;
      if (at !== from && goal(at)) {
        const path: string[] = [];
        for (let s = at; s !== from; s = previous.get(s)!) path.unshift(s);
        return path;
      }
      if (def.states[at]?.terminal) continue;
      for (const edge of def.edges) {
        if (edge.from === at && edge.by.includes(actorKind) && !previous.has(edge.to)) {
          previous.set(edge.to, at);
          queue.push(edge.to);
        }
      }
    }
  }
  return null;
}
