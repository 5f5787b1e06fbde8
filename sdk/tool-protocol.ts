import { VerityApiError } from "./errors";
import type {
  Execution,
  ExecutionLedger,
  InstructionGuard,
  LeaseConflictNotice,
  OutcomeResult,
  RecordOutcomeBody,
  Task,
  ToolName,
} from "./types";

/**
 * The side-effect protocol of the execution ledger, client side:
 *
 *   recordIntent + send ─ receipt? ─────────────────────▶ return it, call nothing
 *        │ proceed (SENT)
 *   call(idempotencyKey) ─▶ recordOutcome ───────────────▶ succeeded | failed | unknown
 *
 * Two requests to Verity per effect: the intent asks the server to mark the
 * attempt SENT in the intent's own transaction (`send`), so no markSent
 * follows. With `sendWithIntent: false` it is three, as before `send`:
 * recordIntent, then markSent, then the call and the outcome. An intent
 * answered with its attempt still INTENT_RECORDED is sent by markSent either
 * way: the SDK follows the status the server returned.
 *
 * The intent is durable before anything leaves, so a crash at any point
 * leaves a record recovery can read: INTENT_RECORDED was never sent (this
 * same attempt is sent on resume), SENT may or may not have happened (the
 * server reconciles it before any retry). A call that throws or times out
 * is UNKNOWN, never failed: only the provider can say nothing happened.
 *
 * A known failure is tried again, under the same key, while the server's
 * advice on the failed execution (`execution.retry`, which counts the
 * tool's attempt limit) says a retry is safe; what it cannot retry it says
 * why, and past the limit the server hands the call to a review itself.
 *
 * Fault points (dbos's debug trigger points) name the moments a crash
 * matters, so chaos tests can kill the process exactly there. With the
 * intent sending, after_intent and after_sent are the same moment (the
 * attempt is SENT at both); they still fire in that order.
 */
export const faultPoints = ["after_intent", "after_sent", "after_call", "after_outcome"] as const;
export type FaultPoint = (typeof faultPoints)[number];

export interface FaultPointContext {
  taskId: string;
  toolCallId: string;
  executionId: string;
  attemptId: string;
}

export type FaultPointHook = (point: FaultPoint, context: FaultPointContext) => void | Promise<void>;

export interface ExecuteToolInput {
  taskId: string;
  /** The logical call within the task: the same on every retry and after a crash. */
  toolCallId: string;
  tool: ToolName;
  request: Record<string, unknown>;
  /** The task's version: the intent commits with its move to WAITING_FOR_TOOL under compare-and-swap. */
  expectedVersion: number;
  fencingToken?: string;
  /** Where the task goes after a success: more work (RUNNING, default) or VALIDATING. */
  nextStatus?: "RUNNING" | "VALIDATING";
  /** How long `call` may take before its outcome is unknown. */
  callTimeoutMs?: number;
  /** The task instruction this call relies on (e.g. the current "refund" instruction's id). */
  instructionId?: string;
  /**
   * This call is a compensation: it undoes that known-succeeded execution of
   * the same task, through the compensating tool the execution's tool
   * declares. Its own toolCallId gives it its own idempotency key.
   */
  compensatesExecutionId?: string;
  /**
   * Ask a person to approve this call before it is sent (the framework's
   * tool approval): the first attempt comes back `blocked` with the review's
   * id, and the same call once approved proceeds under its key; rejected, it
   * is cancelled for good.
   */
  approval?: { reason: string };
  /**
   * false: return the first known failure instead of retrying it; the
   * default retries while the server's advice (execution.retry.safe) says a
   * retry under the same key is safe, up to the tool's attempt limit.
   */
  retry?: boolean;
  /**
   * true (the default): the intent marks the attempt SENT in its own
   * transaction (the API's `send`), so an effect costs two requests to
   * Verity (intent, outcome) and one commit fewer than intent, markSent,
   * outcome. The price: an answer lost or a crash right after the intent
   * leaves the attempt SENT, though nothing left; the server then asks the
   * provider (a lookup) before any retry — never a second effect, but the
   * task waits for its reconciliation.
   *
   * false: intent, then markSent. A crash between the two leaves the attempt
   * INTENT_RECORDED, which a resumed worker sends under the same key without
   * a lookup: worth the extra request where the provider has no lookup or a
   * slow one.
   */
  sendWithIntent?: boolean;
}

/** What `call` needs to cause the effect at most once and tie it back to this execution. */
export interface ToolCallContext {
  idempotencyKey: string;
  executionId: string;
  attemptId: string;
  attempt: number;
  taskId: string;
  toolCallId: string;
  /** Aborted when callTimeoutMs passes: pass it on to the provider's client. */
  signal: AbortSignal;
}

export type ToolOutcome =
  /** The provider confirmed the effect; `evidence` must name the execution id or the idempotency key. */
  | { outcome: "succeeded"; result?: Record<string, unknown>; evidence: Record<string, unknown> }
  /** The provider stated that this request applied nothing; `retryable` is kept in the execution's result. */
  | {
      outcome: "failed";
      error: string;
      retryable?: boolean;
      result?: Record<string, unknown>;
      evidence?: Record<string, unknown>;
    }
  /** Nobody knows: a timeout, a lost answer, a 5xx. */
  | { outcome: "unknown"; error: string; evidence?: Record<string, unknown> };

export type ToolExecution =
  /** The call had already succeeded: nothing was sent now; `execution.result` is its result. */
  | { kind: "receipt"; execution: Execution; task: Task }
  | ({ kind: "succeeded"; execution: Execution; task: Task } & RecordedOutcome)
  /**
   * The last attempt applied nothing (the provider said so), after every
   * retry the server's advice allowed. `retryable`: a further attempt under
   * the same key is safe now (execution.retry.safe; its reason says why or
   * why not). False past the tool's attempt limit, where the server has
   * already handed the call to a review (execution NEEDS_HUMAN, task
   * WAITING_FOR_HUMAN), and after a refusal the provider would repeat.
   */
  | ({ kind: "failed"; execution: Execution; task: Task; retryable: boolean; error: string } & RecordedOutcome)
  /** This attempt's outcome is unknown: the task is RECONCILING and the server takes over. */
  | ({ kind: "unknown"; execution: Execution; task: Task; error: string } & RecordedOutcome)
  /** An earlier attempt's outcome is still unknown (SENT, OUTCOME_UNKNOWN, NEEDS_HUMAN): nothing was sent. */
  | { kind: "unresolved"; execution: Execution; task: Task }
  /**
   * Not sent: the task's instructions stop it (the one relied on was
   * superseded or is not authorized, or the current one forbids it). It is
   * frozen for review; `detail` says why. Stop working on the task.
   */
  | {
      kind: "blocked";
      execution: Execution;
      task: Task;
      reviewId: string;
      detail: string;
      instructions: InstructionGuard | null;
    };

interface RecordedOutcome {
  /**
   * Set when the outcome was recorded but the task was not moved: this
   * worker's lease was taken over while the call was out (the task is still
   * WAITING_FOR_TOOL; its new holder continues from the receipt). Stop
   * working on the task. Null otherwise.
   */
  leaseConflict: LeaseConflictNotice | null;
}

export interface ExecuteToolOptions {
  faultPoint?: FaultPointHook;
  /** Used when the input names no callTimeoutMs. */
  defaultCallTimeoutMs: number;
}

export async function executeToolProtocol(
  ledger: ExecutionLedger,
  input: ExecuteToolInput,
  call: (ctx: ToolCallContext) => Promise<ToolOutcome>,
  options: ExecuteToolOptions,
): Promise<ToolExecution> {
  let result = await attemptOnce(ledger, input, call, options);
  // The server's advice counts the tool's attempt limit; this bound only guards against a server that never says stop.
  for (let retries = 0; retries < MAX_AUTOMATIC_RETRIES && isSafeToRetry(result, input); retries++) {
    result = await attemptOnce(ledger, { ...input, expectedVersion: result.task.version }, call, options);
  }
  return result;
}

const MAX_AUTOMATIC_RETRIES = 10;

/**
 * A failed attempt is made again (same tool_call_id, so the same key) only
 * while the server says that is safe and the task is back in this worker's
 * hands: RUNNING, its lease not taken over.
 */
function isSafeToRetry(result: ToolExecution, input: ExecuteToolInput): boolean {
  return (
    input.retry !== false &&
    result.kind === "failed" &&
    result.leaseConflict === null &&
    result.execution.retry?.safe === true &&
    result.task.status === "RUNNING"
  );
}

async function attemptOnce(
  ledger: ExecutionLedger,
  input: ExecuteToolInput,
  call: (ctx: ToolCallContext) => Promise<ToolOutcome>,
  options: ExecuteToolOptions,
): Promise<ToolExecution> {
  const sendWithIntent = input.sendWithIntent !== false;
  let intent;
  try {
    intent = await ledger.recordIntent(input.taskId, {
      tool_call_id: input.toolCallId,
      tool: input.tool,
      request: input.request,
      expected_version: input.expectedVersion,
      ...(input.fencingToken ? { fencing_token: input.fencingToken } : {}),
      ...(input.instructionId ? { instruction_id: input.instructionId } : {}),
      ...(input.compensatesExecutionId ? { compensates_execution_id: input.compensatesExecutionId } : {}),
      ...(input.approval ? { approval: input.approval } : {}),
      ...(sendWithIntent ? { send: true } : {}),
    });
  } catch (error) {
    // A resumed intent is sent by the server's markSent, whose last-moment instruction check may freeze it.
    const frozen = await frozenAtSend(ledger, error, input.taskId);
    if (frozen) return frozen;
    const executionId = unresolvedExecutionOf(error);
    if (executionId === undefined) throw error;
    const [execution, task] = await Promise.all([ledger.getExecution(executionId), ledger.getTask(input.taskId)]);
    return { kind: "unresolved", execution, task };
  }
  if (intent.kind === "receipt") return { kind: "receipt", execution: intent.execution, task: intent.task };
  if (intent.kind === "blocked") {
    return {
      kind: "blocked",
      execution: intent.execution,
      task: intent.task,
      reviewId: intent.review_id,
      detail: intent.detail,
      instructions: intent.instructions,
    };
  }

  const execution = intent.execution;
  const point = (name: FaultPoint) =>
    options.faultPoint?.(name, {
      taskId: input.taskId,
      toolCallId: input.toolCallId,
      executionId: execution.id,
      attemptId: execution.attempt_id,
    });
  await point("after_intent");
  // Sent with the intent (SENT already), or not: then markSent sends it now.
  if (execution.status === "INTENT_RECORDED") {
    try {
      await ledger.markSent(execution.id, execution.attempt_id, input.fencingToken);
    } catch (error) {
      const frozen = await frozenAtSend(ledger, error, input.taskId, execution.id);
      if (frozen) return frozen;
      throw error;
    }
  }
  await point("after_sent");
  const outcome = await callWithTimeout(call, execution, input, input.callTimeoutMs ?? options.defaultCallTimeoutMs);
  await point("after_call");
  const recorded = await recordOutcomeOf(ledger, execution, outcome, input);
  await point("after_outcome");
  return recorded;
}

/**
 * `blocked` when `error` is markSent's refusal (422
 * instruction_current_before_send, from markSent or from an intent that
 * sends): an instruction recorded since the intent froze the attempt at the
 * last moment, and nothing left.
 */
async function frozenAtSend(
  ledger: ExecutionLedger,
  error: unknown,
  taskId: string,
  executionId?: string,
): Promise<ToolExecution | undefined> {
  if (!(error instanceof VerityApiError) || !error.hasInvariant("instruction_current_before_send")) return undefined;
  const id = executionId ?? error.problem.execution_id;
  if (typeof id !== "string") return undefined;
  const [frozen, task] = await Promise.all([ledger.getExecution(id), ledger.getTask(taskId)]);
  const reviewId = typeof error.problem.review_id === "string" ? error.problem.review_id : "";
  return { kind: "blocked", execution: frozen, task, reviewId, detail: error.detail, instructions: null };
}

/** The execution a 422 unknown_outcome_reconciled_before_retry names, if that is what `error` is. */
function unresolvedExecutionOf(error: unknown): string | undefined {
  if (!(error instanceof VerityApiError) || !error.hasInvariant("unknown_outcome_reconciled_before_retry"))
    return undefined;
  const id = error.problem.execution_id;
  return typeof id === "string" ? id : undefined;
}

async function callWithTimeout(
  call: (ctx: ToolCallContext) => Promise<ToolOutcome>,
  execution: Execution,
  input: ExecuteToolInput,
  timeoutMs: number,
): Promise<ToolOutcome> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<ToolOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({ outcome: "unknown", error: `no outcome within ${timeoutMs} ms` });
    }, timeoutMs);
  });
  const ctx: ToolCallContext = {
    idempotencyKey: execution.idempotency_key,
    executionId: execution.id,
    attemptId: execution.attempt_id,
    attempt: execution.attempt,
    taskId: input.taskId,
    toolCallId: input.toolCallId,
    signal: controller.signal,
  };
  try {
    // A throw is not a failure: the request may have reached the provider before it.
    const called = Promise.resolve()
      .then(() => call(ctx))
      .then(
        (outcome) => validOutcome(outcome),
        (error: unknown) => ({
          outcome: "unknown" as const,
          error: `the call threw: ${error instanceof Error ? error.message : String(error)}`,
        }),
      );
    return await Promise.race([called, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Anything but a well-formed outcome from `call` is unknown too. */
function validOutcome(outcome: unknown): ToolOutcome {
  const o = outcome as Partial<Record<string, unknown>> | null;
  if (o && o.outcome === "succeeded" && isRecord(o.evidence)) return outcome as ToolOutcome;
  if (o && (o.outcome === "failed" || o.outcome === "unknown") && typeof o.error === "string")
    return outcome as ToolOutcome;
  return {
    outcome: "unknown",
    error: "the call returned no valid outcome (succeeded needs evidence; failed and unknown need an error)",
  };
}

/** The ledger keeps at most 2,000 characters of an error. */
function clip(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 1997)}...` : text;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The server's refusals of a success report after asking the provider (lib/use-cases/reconciliation/confirm-at-provider.ts). */
const unconfirmedInvariants = ["success_confirmed_by_provider", "success_matches_provider_record"];

async function recordOutcomeOf(
  ledger: ExecutionLedger,
  execution: Execution,
  outcome: ToolOutcome,
  input: ExecuteToolInput,
): Promise<ToolExecution> {
  const base = {
    attempt_id: execution.attempt_id,
    ...(input.fencingToken ? { fencing_token: input.fencingToken } : {}),
  };
  const body: RecordOutcomeBody =
    outcome.outcome === "succeeded"
      ? {
          ...base,
          outcome: "succeeded",
          evidence: outcome.evidence,
          ...(outcome.result ? { result: outcome.result } : {}),
          ...(input.nextStatus ? { next_status: input.nextStatus } : {}),
        }
      : outcome.outcome === "failed"
        ? {
            ...base,
            outcome: "failed",
            error: clip(outcome.error),
            result: { ...outcome.result, retryable: outcome.retryable ?? false },
            ...(outcome.evidence ? { evidence: outcome.evidence } : {}),
          }
        : {
            ...base,
            outcome: "unknown",
            error: clip(outcome.error),
            ...(outcome.evidence ? { evidence: outcome.evidence } : {}),
          };
  let r: OutcomeResult;
  try {
    r = await ledger.recordOutcome(execution.id, body);
  } catch (error) {
    if (!(error instanceof VerityApiError)) throw error;
    if (body.outcome === "succeeded" && error.hasInvariant("success_requires_matching_evidence")) {
      // The provider said yes, but not about this execution: that proves
      // nothing, so the outcome is unknown and reconciliation decides.
      const why = clip(`the provider's answer did not name this execution: ${error.detail}`);
      const u = await ledger.recordOutcome(execution.id, {
        ...base,
        outcome: "unknown",
        evidence: body.evidence,
        error: why,
      });
      return { kind: "unknown", execution: u.execution, task: u.task, error: why, leaseConflict: u.lease_conflict };
    }
    if (body.outcome === "succeeded" && unconfirmedInvariants.some((i) => error.hasInvariant(i))) {
      // The server asked the provider, whose record does not bear the tool's
      // success out (nothing under the key, or another effect). Left SENT, the
      // attempt would wait out the reconciler's timeout; as unknown it is
      // reconciled now. Any other status: someone settled it (below).
      const current = await ledger.getExecution(execution.id);
      if (current.status === "SENT") {
        const why = clip(`the provider's record does not confirm the success the tool reported: ${error.detail}`);
        const u = await ledger.recordOutcome(execution.id, {
          ...base,
          outcome: "unknown",
          evidence: body.evidence,
          error: why,
        });
        return { kind: "unknown", execution: u.execution, task: u.task, error: why, leaseConflict: u.lease_conflict };
      }
    }
    // Someone settled the execution first (the provider's webhook, the
    // reconciler, a reviewer): their record stands, and is the answer. So
    // does a recorded failure the provider's own records do not overturn.
    const standing = ["execution_status_machine", "success_confirmed_by_provider", "success_matches_provider_record"];
    if (error.code === "version_conflict" || standing.some((i) => error.hasInvariant(i)))
      return settledElsewhere(ledger, execution.id, input.taskId, error);
    throw error;
  }
  return resultOf(r, body);
}

function resultOf(r: OutcomeResult, body: RecordOutcomeBody): ToolExecution {
  const recorded = { execution: r.execution, task: r.task, leaseConflict: r.lease_conflict };
  switch (body.outcome) {
    case "succeeded":
      return { kind: "succeeded", ...recorded };
    case "failed":
      // The server's advice, not only the provider's word: it knows the attempt limit, and a failure it handed to a review has none.
      return {
        kind: "failed",
        ...recorded,
        retryable: r.execution.retry?.safe === true,
        error: body.error ?? "failed",
      };
    case "unknown":
      return { kind: "unknown", ...recorded, error: body.error ?? "unknown" };
  }
}

async function settledElsewhere(
  ledger: ExecutionLedger,
  executionId: string,
  taskId: string,
  conflict: VerityApiError,
): Promise<ToolExecution> {
  const execution = await ledger.getExecution(executionId);
  const task = await ledger.getTask(taskId);
  const note = `recorded by someone else first (${conflict.detail})`;
  const leaseConflict = null;
  switch (execution.status) {
    case "SUCCEEDED":
    case "RECONCILED_SUCCEEDED":
      return { kind: "succeeded", execution, task, leaseConflict };
    case "FAILED":
    case "RECONCILED_FAILED":
      return {
        kind: "failed",
        execution,
        task,
        retryable: execution.retry?.safe === true,
        error: execution.error ?? note,
        leaseConflict,
      };
    case "CANCELLED":
      return {
        kind: "failed",
        execution,
        task,
        retryable: false,
        error: `the execution was cancelled: ${note}`,
        leaseConflict,
      };
    case "SENT":
    case "OUTCOME_UNKNOWN":
    case "NEEDS_HUMAN":
    case "INTENT_RECORDED":
      return { kind: "unknown", execution, task, error: execution.error ?? note, leaseConflict };
  }
}
