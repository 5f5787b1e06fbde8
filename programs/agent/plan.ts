import type { Execution, Instruction, Task, TaskPatch } from "@/sdk";

/**
 * The refund agent's decisions, as a pure function of what Verity holds:
 * the task (status, subtasks) and its execution ledger. The agent keeps no
 * state of its own between steps, so a fresh run, a retry and a resume after
 * a crash are the same loop: read, plan one step, commit it, read again.
 * Whatever was committed last is where it continues; a tool call whose
 * receipt exists is never made again.
 */

export const REFUND_CALL = "refund";
export const NOTE_CALL = "notify-customer";

export const SUBTASK = { lookup: "lookup-order", refund: "issue-refund", notify: "notify-customer" } as const;

export const refundSubtasks = [
  { id: SUBTASK.lookup, title: "Look up the order", mandatory: true },
  { id: SUBTASK.refund, title: "Issue the refund", mandatory: true },
  { id: SUBTASK.notify, title: "Notify the customer", mandatory: false },
];

/**
 * The subtasks of one order's task, the refund's amount and order in their
 * titles, so a person reading the task sees what it is for in words, not only
 * encoded in its intent id. Deterministic: a resumed run asks for the same.
 */
export function refundSubtasksOf(order: { orderId: string; amountCents: number; currency: string }) {
  const amount = `${(order.amountCents / 100).toFixed(2)} ${order.currency.toUpperCase()}`;
  const titles: Record<string, string> = {
    [SUBTASK.lookup]: `Look up order ${order.orderId}`,
    [SUBTASK.refund]: `Refund ${amount} for order ${order.orderId}`,
    [SUBTASK.notify]: `Tell the customer about the ${amount} refund`,
  };
  return refundSubtasks.map((s) => ({ ...s, title: titles[s.id] ?? s.title }));
}

/** How each task ended for this run; only `error` is the agent's own fault (exit non-zero). */
export type TaskOutcome = "completed" | "reconciling" | "review" | "failed" | "cancelled" | "in_flight" | "error";

export type AgentStep =
  | { kind: "transition"; to?: string; patch?: TaskPatch; reason: string }
  /** `instructionId`: the refund relies on the task's current "refund" instruction, when it has one. */
  | {
      kind: "tool";
      toolCallId: typeof REFUND_CALL | typeof NOTE_CALL;
      nextStatus: "RUNNING" | "VALIDATING";
      instructionId?: string;
    }
  /** A SENT execution found on resume: the worker that sent it is gone, so its outcome is unknown. */
  | { kind: "record_unknown"; execution: Execution }
  | { kind: "stop"; outcome: TaskOutcome; detail: string };

const succeeded = new Set(["SUCCEEDED", "RECONCILED_SUCCEEDED"]);
const knownFailed = new Set(["FAILED", "RECONCILED_FAILED"]);
const unresolved = new Set(["SENT", "OUTCOME_UNKNOWN", "NEEDS_HUMAN"]);

function done(id: string) {
  return { id, status: "COMPLETED" as const };
}

/**
 * A known failure is retried (same tool_call_id, so the same key) exactly
 * when the server's advice on it says that is safe: the provider said
 * nothing was applied, or the reconciler established it (never sent, never
 * applied), and the tool's attempt limit is not reached
 * (lib/model/executions/execution-rules.ts retryAdviceOf).
 */
function isSafeToRetry(e: Execution): boolean {
  return e.retry?.safe === true;
}

/**
 * A refund that failed and is not retried. The provider refusing the
 * request itself is its final word: the task fails, with the provider's
 * reason. Anything else — the attempts used up, nobody saying whether a
 * retry would work — goes to a person with the reason, never to FAILED.
 */
function refundNotRetried(refund: Execution): AgentStep {
  if (refund.retry?.code === "refused") {
    return {
      kind: "transition",
      to: "FAILED",
      patch: { subtasks: [{ id: SUBTASK.refund, status: "FAILED" }] },
      reason: `refund refused by the provider: ${refund.error ?? refund.retry.reason}`,
    };
  }
  const why =
    refund.retry?.reason ?? `recorded ${refund.status}${refund.error ? ` (${refund.error})` : ""} without retry advice`;
  return {
    kind: "transition",
    to: "WAITING_FOR_HUMAN",
    reason: `the refund was not made and is not retried automatically: ${why}`.slice(0, 1000),
  };
}

/**
 * `refundInstruction`: the task's current "refund" instruction (its ledger's
 * `current.refund`), if any. The refund names it as what it relies on, so if
 * a newer instruction supersedes it before the call leaves, the server
 * freezes the call for review instead of sending it; whether an instruction
 * allows the refund is the server's judgement, not the plan's.
 */
export function planNextStep(
  task: Task,
  executions: readonly Execution[],
  identity: string,
  refundInstruction?: Pick<Instruction, "id"> | null,
): AgentStep {
  const plan = planStep(task, executions, identity);
  if (plan.kind === "tool" && plan.toolCallId === REFUND_CALL && refundInstruction)
    return { ...plan, instructionId: refundInstruction.id };
  return plan;
}

function planStep(task: Task, executions: readonly Execution[], identity: string): AgentStep {
  const refund = executions.find((e) => e.tool_call_id === REFUND_CALL);
  const note = executions.find((e) => e.tool_call_id === NOTE_CALL);
  const subtask = (id: string) => task.state.subtasks.find((s) => s.id === id)?.status;
  const refundDone = refund !== undefined && succeeded.has(refund.status);

  switch (task.status) {
    case "RECEIVED":
      return { kind: "transition", to: "PLANNING", reason: "planning the refund" };
    case "PLANNING":
      return { kind: "transition", to: "READY", reason: "plan: look up the order, refund, notify the customer" };
    case "READY":
      return {
        kind: "transition",
        to: "RUNNING",
        patch: { active_agents: [identity] },
        reason: "refund agent started",
      };

    case "RUNNING": {
      if (subtask(SUBTASK.lookup) !== "COMPLETED")
        return { kind: "transition", patch: { subtasks: [done(SUBTASK.lookup)] }, reason: "order looked up" };
      if (refundDone && subtask(SUBTASK.refund) !== "COMPLETED") {
        return {
          kind: "transition",
          patch: { subtasks: [done(SUBTASK.refund)] },
          reason: `refund confirmed (${refund.status})`,
        };
      }
      if (!refund || refund.status === "INTENT_RECORDED")
        return { kind: "tool", toolCallId: REFUND_CALL, nextStatus: "RUNNING" };
      if (knownFailed.has(refund.status))
        return isSafeToRetry(refund)
          ? { kind: "tool", toolCallId: REFUND_CALL, nextStatus: "RUNNING" }
          : refundNotRetried(refund);
      if (unresolved.has(refund.status))
        return { kind: "stop", outcome: "reconciling", detail: `refund ${refund.status}: the server reconciles it` };
      if (refund.status === "CANCELLED")
        return { kind: "stop", outcome: "cancelled", detail: "the refund was cancelled" };
      // The refund is done and recorded: the optional note.
      if (!note || note.status === "INTENT_RECORDED")
        return { kind: "tool", toolCallId: NOTE_CALL, nextStatus: "VALIDATING" };
      if (knownFailed.has(note.status) && isSafeToRetry(note))
        return { kind: "tool", toolCallId: NOTE_CALL, nextStatus: "VALIDATING" };
      if (unresolved.has(note.status))
        return {
          kind: "stop",
          outcome: "reconciling",
          detail: `customer note ${note.status}: the server reconciles it`,
        };
      // RUNNING reaches VALIDATING only through a tool call, and the note
      // cannot be sent again: a person decides how to close the task.
      return {
        kind: "transition",
        to: "WAITING_FOR_HUMAN",
        reason: `refund issued, but the customer note is ${note.status}${note.error ? `: ${note.error}` : ""}`,
      };
    }

    case "WAITING_FOR_TOOL": {
      const pending = executions.find((e) => e.status === "INTENT_RECORDED");
      if (pending)
        return {
          kind: "tool",
          toolCallId: pending.tool_call_id === NOTE_CALL ? NOTE_CALL : REFUND_CALL,
          nextStatus: pending.tool_call_id === NOTE_CALL ? "VALIDATING" : "RUNNING",
        };
      const sent = executions.find((e) => e.status === "SENT");
      if (sent) return { kind: "record_unknown", execution: sent };
      if (executions.some((e) => unresolved.has(e.status)))
        return {
          kind: "stop",
          outcome: "reconciling",
          detail: "outcome unknown: the server reconciles it with the provider",
        };
      // Every call has its outcome, yet the task still waits: the worker that
      // recorded it had lost the lease, so its move was refused (and the
      // server moves only tasks whose outcome it settled itself). The lease
      // holder — this agent — continues from the receipt.
      const last = executions.at(-1);
      if (last && (succeeded.has(last.status) || knownFailed.has(last.status))) {
        const to = succeeded.has(last.status) && last.tool_call_id === NOTE_CALL ? "VALIDATING" : "RUNNING";
        return {
          kind: "transition",
          to,
          reason: `${last.tool_call_id} is ${last.status}, recorded by a worker whose lease was taken over; continuing from it`,
        };
      }
      return { kind: "stop", outcome: "in_flight", detail: "waiting for a tool whose outcome another party records" };
    }

    case "VALIDATING": {
      if (!refundDone) return { kind: "transition", to: "RUNNING", reason: "validation: no confirmed refund yet" };
      // A task taken over on a standby can come here from a checkpoint older than the lookup's completion, its
      // refund and note recorded as lost effects: the order was looked up (the refund was made), so say so first.
      if (subtask(SUBTASK.lookup) !== "COMPLETED")
        return { kind: "transition", patch: { subtasks: [done(SUBTASK.lookup)] }, reason: "order looked up" };
      if (subtask(SUBTASK.refund) !== "COMPLETED")
        return {
          kind: "transition",
          patch: { subtasks: [done(SUBTASK.refund)] },
          reason: `refund confirmed (${refund.status})`,
        };
      // Reconciliation can confirm the refund straight into VALIDATING: the note was never sent.
      if (!note) return { kind: "transition", to: "RUNNING", reason: "validation: the customer has not been notified" };
      const notified = succeeded.has(note.status);
      return {
        kind: "transition",
        to: "COMPLETED",
        patch: {
          ...(notified ? { subtasks: [done(SUBTASK.notify)] } : {}),
          active_agents: [],
          completed_agents: [identity],
        },
        reason: notified ? "refund and customer note confirmed by the providers" : "refund confirmed by the provider",
      };
    }

    case "RECONCILING":
      return {
        kind: "stop",
        outcome: "reconciling",
        detail: "outcome unknown: the server reconciles it with the provider",
      };
    case "WAITING_FOR_HUMAN":
    case "HUMAN_RESOLVED":
      return { kind: "stop", outcome: "review", detail: "a person decides" };
    case "FAILED":
    case "RECOVERING":
    case "PERMANENTLY_FAILED":
      return { kind: "stop", outcome: "failed", detail: task.status };
    case "COMPLETED":
      return { kind: "stop", outcome: "completed", detail: "done" };
    case "CANCELLED":
      return { kind: "stop", outcome: "cancelled", detail: "cancelled" };
    default:
      return { kind: "stop", outcome: "error", detail: `unexpected status ${task.status}` };
  }
}
