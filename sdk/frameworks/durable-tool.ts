import type { z } from "zod";
import { isVerityApiError } from "../errors";
import {
  executeToolProtocol,
  type FaultPointHook,
  type ToolCallContext,
  type ToolExecution,
  type ToolOutcome,
} from "../tool-protocol";
import type { Execution, ExecutionLedger, ToolName } from "../types";

/**
 * What the framework adapters (ai-sdk.ts, langchain.ts, openai-agents.ts,
 * langgraph.ts) share: one call of a Verity tool made by an agent framework,
 * sent through the execution ledger (sdk/tool-protocol.ts) and answered as a
 * result the model can read.
 *
 * The framework's own tool-call id names the ledger's call, so the same
 * call replayed after a crash (a resumed run, a re-executed node) is the
 * same Verity call: its receipt if it succeeded, "waiting for
 * reconciliation" while its outcome is unknown, and never a second request
 * to the provider. Nothing here retries an unknown outcome: the server
 * reconciles it with the provider first.
 */

/** The run a framework's tool calls belong to: one Verity task. */
export interface VerityRun {
  /** A VerityClient (or any ExecutionLedger). */
  verity: ExecutionLedger;
  /** The task the calls belong to: with the framework's tool-call id it makes the idempotency key. */
  taskId: string;
  /** The task's lease token when the run holds one (withLease); read at every call, so a renewed handle works. */
  fencingToken?: string | (() => string | undefined);
  /** Chaos tests: named fault points of the protocol (killAtFaultPoints). */
  faultPoint?: FaultPointHook;
  /** How long the tool's call may take before its outcome is unknown; default 30 s. */
  callTimeoutMs?: number;
}

/**
 * A tool an agent may call, whose every call goes through the ledger. Its
 * functions are methods so that a spec of a particular schema is also a
 * DurableToolSpec of any schema (the adapters take lists of mixed specs).
 */
export interface DurableToolSpec<Schema extends z.ZodObject = z.ZodObject> {
  /** The name the model sees. */
  name: string;
  description: string;
  /** The model's arguments (a zod object), validated by the framework. */
  inputSchema: Schema;
  /** The tool in Verity's registry (built in or registered), e.g. payments.refund. */
  verityTool: ToolName;
  /** The request recorded with the intent and checked against the tool's schema; default the input itself. */
  request?(input: z.output<Schema>): Record<string, unknown>;
  /** Where the task goes after a success: more work (RUNNING, the default) or VALIDATING, when this call is the task's last. */
  nextStatus?: "RUNNING" | "VALIDATING";
  /**
   * A reason in words when this call must be approved by a person before it
   * is sent (e.g. an amount above a limit): the call waits in Verity's
   * review queue (four eyes above the threshold) and the same call, run
   * again, goes as the review decided. Undefined: no approval needed.
   */
  approval?(input: z.output<Schema>): string | undefined;
  /** The task instruction the call relies on (the instruction guard checks it). */
  instructionId?(input: z.output<Schema>): string | undefined;
  /**
   * Makes the effect: pass `ctx.idempotencyKey` to the provider and return
   * what it said. A throw or a timeout is an unknown outcome, never a failure.
   */
  call(input: z.output<Schema>, ctx: ToolCallContext): Promise<ToolOutcome>;
}

interface CallFacts {
  tool: string;
  toolCallId: string;
  executionId: string | null;
  idempotencyKey: string | null;
  /** The ledger's status of the call, e.g. SUCCEEDED, OUTCOME_UNKNOWN. */
  executionStatus: string | null;
  /** What the run should do now, in words the model can act on. */
  message: string;
}

/**
 * What a durable tool answers, the same in every framework. Only
 * `succeeded` means the effect happened; every other status means "do not
 * call this tool again for this": Verity decides what happens next.
 */
export type DurableToolResult =
  | (CallFacts & {
      status: "succeeded";
      /** true: recorded earlier; nothing was sent now. */
      replayed: boolean;
      result: unknown;
    })
  /** The provider's answer was lost (or an earlier attempt's is): Verity reconciles with the provider; nothing is retried before. */
  | (CallFacts & { status: "waiting_for_reconciliation" })
  /** The provider said nothing happened. `retryable` false: the server has handed it to a review or it would fail again. */
  | (CallFacts & { status: "failed"; retryable: boolean; error: string })
  /** The instruction guard stopped it before sending; frozen for people in the review queue. */
  | (CallFacts & { status: "blocked"; reviewId: string })
  /** Not sent: it waits for a person's approval in the review queue (spec.approval). Run the same call again once decided. */
  | (CallFacts & { status: "awaiting_approval"; reviewId: string })
  /** A person rejected this call in the review queue: it is cancelled for good and will never be sent. */
  | (CallFacts & { status: "rejected" })
  /** Verity refused to record the call (its request, the task's state, its lease): nothing was sent. */
  | (CallFacts & { status: "refused"; code: string });

const clientIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * The ledger's tool_call_id of a framework's tool call: `<tool>:<framework
 * call id>` when that is a valid id, else the tool's name and a sha-256 of
 * both. The same framework call gives the same id in every process, which
 * is what makes a replay after a crash the same Verity call.
 */
export async function verityToolCallId(toolName: string, frameworkCallId: string): Promise<string> {
  const plain = `${toolName}:${frameworkCallId}`;
  if (clientIdPattern.test(plain)) return plain;
  const bytes = new TextEncoder().encode(`${toolName}\u0000${frameworkCallId}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  const name = toolName.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 40) || "tool";
  return `${/^[A-Za-z0-9]/.test(name) ? name : `t${name}`}:sha256:${hex.slice(0, 64)}`;
}

// Calls of one run go to the ledger one at a time: a framework runs a
// step's tool calls in parallel, but each intent moves the task under
// compare-and-swap, so a second one racing the first would only be refused.
const queues = new WeakMap<ExecutionLedger, Map<string, Promise<unknown>>>();

function serialized<T>(run: VerityRun, work: () => Promise<T>): Promise<T> {
  let byTask = queues.get(run.verity);
  if (!byTask) queues.set(run.verity, (byTask = new Map()));
  const previous = byTask.get(run.taskId) ?? Promise.resolve();
  const next = previous.then(work, work);
  byTask.set(
    run.taskId,
    next.catch(() => undefined),
  );
  return next;
}

/** Reads of the task version lost to a concurrent writer are read again this often before giving up. */
const VERSION_RETRIES = 3;

/**
 * Sends one framework tool call through the ledger: intent, sent, call,
 * outcome, or the recorded receipt. Throws only when Verity could not be
 * reached (a VerityNetworkError): running the same call again is safe then,
 * and answers "waiting for reconciliation" if the request had left.
 */
export function runDurableTool<Schema extends z.ZodObject>(
  run: VerityRun,
  spec: DurableToolSpec<Schema>,
  input: z.output<Schema>,
  frameworkCallId: string,
): Promise<DurableToolResult> {
  return serialized(run, async () => {
    const toolCallId = await verityToolCallId(spec.name, frameworkCallId);
    const facts = { tool: String(spec.verityTool), toolCallId };
    let sent: ToolCallContext | undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        const task = await run.verity.getTask(run.taskId);
        const fencingToken = typeof run.fencingToken === "function" ? run.fencingToken() : run.fencingToken;
        const instructionId = spec.instructionId?.(input);
        const approvalReason = spec.approval?.(input);
        const execution = await executeToolProtocol(
          run.verity,
          {
            taskId: run.taskId,
            toolCallId,
            tool: spec.verityTool,
            request: spec.request ? spec.request(input) : (input as Record<string, unknown>),
            expectedVersion: task.version,
            ...(fencingToken ? { fencingToken } : {}),
            ...(instructionId ? { instructionId } : {}),
            ...(spec.nextStatus ? { nextStatus: spec.nextStatus } : {}),
            ...(approvalReason ? { approval: { reason: approvalReason } } : {}),
          },
          (ctx) => {
            sent = ctx;
            return spec.call(input, ctx);
          },
          { faultPoint: run.faultPoint, defaultCallTimeoutMs: run.callTimeoutMs ?? 30_000 },
        );
        return resultOf(execution, facts);
      } catch (error) {
        if (!isVerityApiError(error)) throw error;
        if (sent) {
          // Refused after the request left (e.g. the lease was taken over while it was out): it may have happened.
          return {
            ...facts,
            status: "waiting_for_reconciliation",
            executionId: sent.executionId,
            idempotencyKey: sent.idempotencyKey,
            executionStatus: null,
            message:
              `${facts.tool} was sent, but Verity refused to record its outcome (${error.detail}). ` +
              "It may have happened: do not call it again; Verity reconciles it with the provider.",
          };
        }
        // The task moved between the read and the intent (nothing was written): read it again.
        if (error.code === "version_conflict" && attempt < VERSION_RETRIES) continue;
        if (error.hasInvariant("cancelled_execution_final")) {
          const id = typeof error.problem.execution_id === "string" ? error.problem.execution_id : null;
          return {
            ...facts,
            status: "rejected",
            executionId: id,
            idempotencyKey: null,
            executionStatus: "CANCELLED",
            message: `${facts.tool} was cancelled in Verity (a person rejected it): it will never be sent. ${error.detail}`,
          };
        }
        return {
          ...facts,
          status: "refused",
          code: error.code,
          executionId: null,
          idempotencyKey: null,
          executionStatus: null,
          message: `Verity refused to record this call, so nothing was sent: ${error.detail}`,
        };
      }
    }
  });
}

function resultOf(x: ToolExecution, facts: { tool: string; toolCallId: string }): DurableToolResult {
  const e: Execution = x.execution;
  const base = { ...facts, executionId: e.id, idempotencyKey: e.idempotency_key, executionStatus: e.status };
  const leaseNote =
    "leaseConflict" in x && x.leaseConflict
      ? " This run's lease was taken over meanwhile: stop working on the task; its new holder continues."
      : "";
  switch (x.kind) {
    case "receipt":
      return {
        ...base,
        status: "succeeded",
        replayed: true,
        result: e.result,
        message: `${facts.tool} had already succeeded for this call; this is its recorded receipt and nothing was sent again.`,
      };
    case "succeeded":
      return {
        ...base,
        status: "succeeded",
        replayed: false,
        result: e.result,
        message: `${facts.tool} succeeded and the provider's record confirms it.${leaseNote}`,
      };
    case "failed":
      return {
        ...base,
        status: "failed",
        retryable: x.retryable,
        error: x.error,
        message: x.retryable
          ? `${facts.tool} failed and the provider applied nothing (${x.error}); Verity says a retry under the same key is safe.${leaseNote}`
          : `${facts.tool} failed and the provider applied nothing (${x.error}); it will not be retried automatically${e.status === "NEEDS_HUMAN" ? ": a person decides in Verity's review queue" : ""}.${leaseNote}`,
      };
    case "unknown":
    case "unresolved":
      return {
        ...base,
        status: "waiting_for_reconciliation",
        message:
          `The outcome of ${facts.tool} is not known (${x.kind === "unknown" ? x.error : `an earlier attempt is ${e.status}`}). ` +
          `It may have happened: Verity is reconciling it with the provider${e.status === "NEEDS_HUMAN" ? " and a person reviews it" : ""}. ` +
          `Do not call it again; the task continues once the provider's record settles it.${leaseNote}`,
      };
    case "blocked":
      if (x.instructions?.kind === "approval_requested")
        return {
          ...base,
          status: "awaiting_approval",
          reviewId: x.reviewId,
          message:
            `${facts.tool} was not sent: it waits for a person's approval in Verity's review queue (${x.reviewId}). ` +
            "Do not call it again now; once the review is decided, the same call goes as it says.",
        };
      return {
        ...base,
        status: "blocked",
        reviewId: x.reviewId,
        message: `Verity did not send ${facts.tool}: ${x.detail} It is frozen for review (${x.reviewId}); stop working on this task.`,
      };
  }
}
