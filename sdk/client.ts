import { context, propagation } from "@opentelemetry/api";
import { sleep } from "@/lib/core/sleep";
import { apiErrorOf, isRetryableStatus, isVerityApiError, VerityNetworkError } from "./errors";
import { withLease, type LeaseHandle, type WithLeaseOptions } from "./lease";
import {
  executeToolProtocol,
  type ExecuteToolInput,
  type FaultPointHook,
  type ToolCallContext,
  type ToolExecution,
  type ToolOutcome,
} from "./tool-protocol";
import type {
  GraphCheckpointPage,
  GraphListQuery,
  GraphPutBody,
  GraphPutResult,
  GraphThread,
  GraphWritesBody,
} from "./graph-types";
import type {
  CreateTaskInput,
  Execution,
  ExecutionDetail,
  ExecutionLedger,
  InboundEvent,
  InstructionLedger,
  IntentResult,
  Lease,
  ListTasksQuery,
  OutcomeResult,
  Instruction,
  RecordInstructionInput,
  RecordInstructionResult,
  RecordIntentBody,
  PerformToolCallBody,
  PerformedToolCall,
  RecordOutcomeBody,
  Task,
  TaskPage,
  TransitionInput,
  TransitionPage,
  TransitionResult,
} from "./types";
import type { WorkflowVersionResource as WorkflowVersion } from "@/lib/adapters/api/workflow-resources";
import type { WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";
import type {
  LookupResourceSchema,
  ToolDetailSchema,
  ToolListSchema,
  ToolVersionResource as ToolVersion,
} from "@/lib/adapters/api/tool-resources";
import type { ToolDefinition } from "@/lib/model/tools/tool-definition";
import type { z } from "zod";

type ToolList = z.infer<typeof ToolListSchema>;
type ToolDetail = z.infer<typeof ToolDetailSchema>;
/** A lookup a worker claimed: the call's key and request, and the fencing token its answer carries. */
export type Lookup = z.infer<typeof LookupResourceSchema>;
/** A worker's answer about an effect (the provider's record must carry its id and idempotency_key). */
export type LookupAnswer =
  | {
      result: "found";
      record: Record<string, unknown> & { id: string; idempotency_key: string };
      evidence?: Record<string, unknown>;
    }
  | { result: "not_found"; evidence?: Record<string, unknown> }
  | { result: "unknown"; reason?: string };
export interface AnsweredLookup {
  lookup: Lookup;
  reconciled: { action: string; execution: Execution } | null;
}

/**
 * A client of Verity's agent API (/api/v1) for any agent process: plain
 * fetch, no server code. Every request it sends is safe to send again, so
 * it retries network errors, timeouts and 502/503/504 by itself:
 *
 *   reads                           naturally
 *   createTask, transition          under an id the SDK fixes before the first try
 *                                   (task_id, transition_id): a retry replays the first result
 *   recordIntent                    keyed by (task, tool_call_id): a retry of a recorded,
 *                                   unsent intent answers `proceed` with the same attempt;
 *                                   of one sent with it (`send`), that its outcome is unresolved
 *   markSent, recordOutcome         a repeat of the same report is answered, not applied
 *   lease acquire/renew/release     under a lease_id the SDK fixes before the first try:
 *                                   a retry gets the same lease, never a second one
 *   postEvent                       de-duplicated by event_id
 *
 * Anything the server decided is thrown as a VerityApiError; no answer
 * after every retry, as a VerityNetworkError.
 */
export interface VerityClientOptions {
  /** Where Verity runs, e.g. http://localhost:3000 */
  baseUrl: string;
  /** An API token (Authorization: Bearer). */
  token: string;
  fetch?: typeof fetch;
  /** Per attempt of one request; default 10 s. */
  timeoutMs?: number;
  /** Further attempts after a network error or a 502/503/504; default 3. */
  retries?: number;
  /** First backoff; doubles each retry, with jitter. Default 200 ms. */
  retryBaseDelayMs?: number;
  /** Called at each named fault point of executeTool (chaos tests). */
  faultPoint?: FaultPointHook;
  /** How long executeTool's `call` may take before its outcome is unknown; default 30 s. */
  callTimeoutMs?: number;
  /**
   * The W3C `traceparent` every request carries, so Verity's spans (and the
   * provider calls it makes) join the caller's trace: a fixed value, or a
   * function asked before each request. Unset: the active OpenTelemetry
   * context's, when the caller has one (through @opentelemetry/api's global
   * propagator); nothing when it has none.
   */
  traceparent?: string | (() => string | undefined);
}

type Method = "GET" | "POST" | "DELETE";

const traceparentPattern = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

function checkTraceparent(value: string): string {
  if (!traceparentPattern.test(value))
    throw new TypeError(
      `traceparent must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>), not ${JSON.stringify(value)}`,
    );
  return value;
}

export class VerityClient implements ExecutionLedger {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly retryBaseDelayMs: number;

  constructor(private readonly options: VerityClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retries = options.retries ?? 3;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 200;
    if (typeof options.traceparent === "string") checkTraceparent(options.traceparent);
  }

  // ── tasks ──────────────────────────────────────────────────────────────

  /** 201 or, for a retry of the same create, the existing task. */
  async createTask(input: CreateTaskInput): Promise<Task> {
    const body = {
      workflow: input.workflow,
      task_id: input.taskId ?? newClientId("task"),
      intent_id: input.intentId,
      ...(input.subtasks ? { subtasks: input.subtasks } : {}),
      ...(input.artifacts ? { artifacts: input.artifacts } : {}),
      ...(input.budget ? { budget: input.budget } : {}),
      ...(input.activeAgents ? { active_agents: input.activeAgents } : {}),
    };
    return this.send<Task>("POST", "/api/v1/tasks", body);
  }

  getTask(taskId: string): Promise<Task> {
    return this.send<Task>("GET", `/api/v1/tasks/${enc(taskId)}`);
  }

  listTasks(query: ListTasksQuery = {}): Promise<TaskPage> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return this.send<TaskPage>("GET", `/api/v1/tasks${qs ? `?${qs}` : ""}`);
  }

  /**
   * A compare-and-swap transition. Retried with the same transition_id, so
   * a lost answer is replayed (`replayed: true`) instead of applied twice.
   */
  transition(taskId: string, input: TransitionInput): Promise<TransitionResult> {
    const body = {
      expected_version: input.expectedVersion,
      transition_id: input.transitionId ?? newClientId("tr"),
      ...(input.to !== undefined ? { to: input.to } : {}),
      ...(input.patch ? { patch: input.patch } : {}),
      ...(input.reason !== undefined ? { reason: input.reason } : {}),
      ...(input.fencingToken ? { fencing_token: input.fencingToken } : {}),
    };
    return this.send<TransitionResult>("POST", `/api/v1/tasks/${enc(taskId)}/transitions`, body);
  }

  listTransitions(taskId: string, page: { afterVersion?: number; limit?: number } = {}): Promise<TransitionPage> {
    const params = new URLSearchParams();
    if (page.afterVersion !== undefined) params.set("after_version", String(page.afterVersion));
    if (page.limit !== undefined) params.set("limit", String(page.limit));
    const qs = params.toString();
    return this.send<TransitionPage>("GET", `/api/v1/tasks/${enc(taskId)}/transitions${qs ? `?${qs}` : ""}`);
  }

  // ── leases ─────────────────────────────────────────────────────────────

  /**
   * A new lease of this process's own: the lease id is fixed before the
   * first try, so a retry whose first answer was lost gets the same lease
   * back, while any other acquire (another process of the same identity
   * included) gets 409 lease_conflict until it is released or expires.
   */
  acquireLease(taskId: string, options: { ttlSeconds?: number; leaseId?: string } = {}): Promise<Lease> {
    const body = {
      lease_id: options.leaseId ?? newClientId("lease"),
      ...(options.ttlSeconds === undefined ? {} : { ttl_seconds: options.ttlSeconds }),
    };
    return this.send<Lease>("POST", `/api/v1/tasks/${enc(taskId)}/lease`, body);
  }

  /** 409 lease_conflict once the token is no longer yours: stop writing. */
  renewLease(taskId: string, fencingToken: string, options: { ttlSeconds?: number } = {}): Promise<Lease> {
    const body = {
      fencing_token: fencingToken,
      ...(options.ttlSeconds === undefined ? {} : { ttl_seconds: options.ttlSeconds }),
    };
    return this.send<Lease>("POST", `/api/v1/tasks/${enc(taskId)}/lease/renew`, body);
  }

  async releaseLease(taskId: string, fencingToken: string): Promise<void> {
    await this.send<undefined>("POST", `/api/v1/tasks/${enc(taskId)}/lease/release`, { fencing_token: fencingToken });
  }

  /** The task's latest lease (live or not: see `active`), null if never leased. */
  async getLease(taskId: string): Promise<Lease | null> {
    return (await this.send<{ lease: Lease | null }>("GET", `/api/v1/tasks/${enc(taskId)}/lease`)).lease;
  }

  /** Runs `fn` holding the task's lease, renewed in the background and released in `finally`. */
  withLease<T>(taskId: string, fn: (lease: LeaseHandle) => Promise<T>, options: WithLeaseOptions = {}): Promise<T> {
    return withLease(this, taskId, fn, options);
  }

  // ── executions ─────────────────────────────────────────────────────────

  recordIntent(taskId: string, body: RecordIntentBody): Promise<IntentResult> {
    return this.send<IntentResult>("POST", `/api/v1/tasks/${enc(taskId)}/executions`, body);
  }

  /**
   * Verity makes the call through the connector it holds (the built-in tools):
   * intent, call and outcome in one request; the agent never holds the
   * provider's credentials. 422 tool_has_connector for any other tool.
   */
  performToolCall(taskId: string, body: PerformToolCallBody): Promise<PerformedToolCall> {
    return this.send<PerformedToolCall>("POST", `/api/v1/tasks/${enc(taskId)}/tool-calls`, body);
  }

  /** 409 lease_conflict when `fencingToken` is not the task's current lease: do not send. */
  markSent(executionId: string, attemptId: string, fencingToken?: string): Promise<Execution> {
    return this.send<Execution>("POST", `/api/v1/executions/${enc(executionId)}/sent`, {
      attempt_id: attemptId,
      ...(fencingToken ? { fencing_token: fencingToken } : {}),
    });
  }

  recordOutcome(executionId: string, body: RecordOutcomeBody): Promise<OutcomeResult> {
    return this.send<OutcomeResult>("POST", `/api/v1/executions/${enc(executionId)}/outcome`, body);
  }

  async listExecutions(taskId: string): Promise<Execution[]> {
    return (await this.send<{ items: Execution[] }>("GET", `/api/v1/tasks/${enc(taskId)}/executions`)).items;
  }

  getExecution(executionId: string): Promise<ExecutionDetail> {
    return this.send<ExecutionDetail>("GET", `/api/v1/executions/${enc(executionId)}`);
  }

  /**
   * Calls a tool at most once per (task, toolCallId): intent (sent with it)
   * → call → outcome, two requests to Verity (`sendWithIntent: false`: a
   * separate markSent, three), or the receipt of an earlier success without
   * calling. A known failure is tried again under the same key while the
   * server's advice (execution.retry) says that is safe, up to the tool's
   * attempt limit (`retry: false` opts out). See sdk/tool-protocol.ts for
   * what each result means.
   */
  executeTool(input: ExecuteToolInput, call: (ctx: ToolCallContext) => Promise<ToolOutcome>): Promise<ToolExecution> {
    return executeToolProtocol(this, input, call, {
      faultPoint: this.options.faultPoint,
      defaultCallTimeoutMs: this.options.callTimeoutMs ?? 30_000,
    });
  }

  // ── instructions ───────────────────────────────────────────────────────

  /** The task's instruction ledger: newest first, each entry's standing, the current instruction per topic, and `seq` to write against. */
  listInstructions(taskId: string): Promise<InstructionLedger> {
    return this.send<InstructionLedger>("GET", `/api/v1/tasks/${enc(taskId)}/instructions`);
  }

  /** The task's current (latest authorized allow/forbid) instruction on `topic`, or null. */
  async getCurrentInstruction(taskId: string, topic: string): Promise<Instruction | null> {
    return (await this.listInstructions(taskId)).current[topic] ?? null;
  }

  /**
   * Appends an instruction under compare-and-swap on the ledger's seq (409
   * version_conflict naming the current seq when someone added one since).
   * Retried with the same instruction_id, so a lost answer is replayed.
   */
  recordInstruction(taskId: string, input: RecordInstructionInput): Promise<RecordInstructionResult> {
    const body = {
      expected_seq: input.expectedSeq,
      instruction_id: input.instructionId ?? newClientId("ins"),
      topic: input.topic,
      directive: input.directive,
      text: input.text,
      ...(input.source ? { source: input.source } : {}),
    };
    return this.send<RecordInstructionResult>("POST", `/api/v1/tasks/${enc(taskId)}/instructions`, body);
  }

  // ── workflows ──────────────────────────────────────────────────────────

  /**
   * A workflow version from the registry: the newest, or `version`. Its
   * `definition` is exactly what publishWorkflow accepts: fetch, edit (with
   * a higher version), publish.
   */
  getWorkflow(name: string, version?: number): Promise<WorkflowVersion> {
    return this.send<WorkflowVersion>(
      "GET",
      version === undefined
        ? `/api/v1/workflows/${enc(name)}`
        : `/api/v1/workflows/${enc(name)}/versions/${enc(String(version))}`,
    );
  }

  /**
   * Publishes a definition (an admin's token, or one with the publish scope
   * for workflows). Safe to retry: the same content again is answered as
   * already published. Other content under a published version throws a
   * 409 naming its digest; an invalid definition a 422 whose `problems` list
   * every problem at its JSON path.
   */
  publishWorkflow(definition: WorkflowDefinitionData): Promise<WorkflowVersion> {
    return this.send<WorkflowVersion>("POST", "/api/v1/workflows", definition);
  }

  // ── tools ──────────────────────────────────────────────────────────────

  /** Every tool, built in and registered, with its newest version. */
  async listTools(): Promise<ToolList["items"]> {
    return (await this.send<ToolList>("GET", "/api/v1/tools")).items;
  }

  /** One tool with every version, newest first; each `definition` is what registerTool accepts. */
  getTool(name: string): Promise<ToolDetail> {
    return this.send<ToolDetail>("GET", `/api/v1/tools/${enc(name)}`);
  }

  /**
   * Registers a tool or a new version (an admin's token, or one with the
   * publish scope for tools). Safe to retry: the same content again is
   * answered as already registered; other content under a registered
   * version throws a 409, an invalid definition a 422 whose `problems` list
   * every problem at its JSON path.
   */
  registerTool(definition: ToolDefinition): Promise<ToolVersion> {
    return this.send<ToolVersion>("POST", "/api/v1/tools", definition);
  }

  /** Retires a tool: no new intents; calls already recorded settle as before. Safe to retry. */
  retireTool(name: string, reason: string): Promise<ToolDetail> {
    return this.send<ToolDetail>("POST", `/api/v1/tools/${enc(name)}/retire`, { reason });
  }

  /**
   * Claims the oldest open lookup of a worker-reconciled tool (a token whose
   * scopes cover the tool); null when there is none. A retry after a lost
   * answer may claim a second lookup: the first is freed when its lease
   * runs out, so nothing is lost, only delayed.
   */
  async claimLookup(tool: string, options: { leaseSeconds?: number } = {}): Promise<Lookup | null> {
    const claimed = await this.send<Lookup | undefined>(
      "POST",
      `/api/v1/tools/${enc(tool)}/lookups/claim`,
      options.leaseSeconds === undefined ? {} : { lease_seconds: options.leaseSeconds },
    );
    return claimed ?? null;
  }

  /**
   * Answers a claimed lookup under its fencing token; the server reconciles
   * the call by it at once. Safe to retry while the claim holds: a repeat of
   * the same answer is refused only once another worker has claimed it.
   */
  answerLookup(lookup: Pick<Lookup, "id" | "fencing_token">, answer: LookupAnswer): Promise<AnsweredLookup> {
    return this.send<AnsweredLookup>("POST", `/api/v1/lookups/${enc(lookup.id)}/answer`, {
      ...answer,
      fencing_token: lookup.fencing_token,
    });
  }

  // ── events ─────────────────────────────────────────────────────────────

  /** An inbound event, applied once however often it is posted. */
  postEvent(event: InboundEvent): Promise<Record<string, unknown>> {
    return this.send<Record<string, unknown>>("POST", "/api/v1/events", {
      event_id: event.eventId,
      source: event.source,
      type: event.type,
      ...(event.taskId ? { task_id: event.taskId } : {}),
      payload: event.payload,
    });
  }

  // ── LangGraph threads (the wire side of sdk/langgraph's VeritySaver) ────

  /** A thread's Verity task, created on first use; the same task every time after. */
  ensureGraphThread(input: { namespace: string; threadId: string; workflow?: string }): Promise<GraphThread> {
    return this.send<GraphThread>("POST", "/api/v1/graph/threads", {
      namespace: input.namespace,
      thread_id: input.threadId,
      ...(input.workflow ? { workflow: input.workflow } : {}),
    });
  }

  /** Safe to retry: the same checkpoint again is answered `replayed`, other content under its id is 409. */
  putGraphCheckpoint(body: GraphPutBody, fencingToken?: string): Promise<GraphPutResult> {
    return this.send<GraphPutResult>("POST", "/api/v1/graph/checkpoints", withToken(body, fencingToken));
  }

  /** Safe to retry: a regular write is kept as first written, a special one (idx < 0) replaced by the same. */
  async putGraphWrites(body: GraphWritesBody, fencingToken?: string): Promise<void> {
    await this.send<unknown>("POST", "/api/v1/graph/writes", withToken(body, fencingToken));
  }

  listGraphCheckpoints(query: GraphListQuery): Promise<GraphCheckpointPage> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query))
      if (v !== undefined) params.set(k, typeof v === "object" ? JSON.stringify(v) : String(v));
    return this.send<GraphCheckpointPage>("GET", `/api/v1/graph/checkpoints?${params.toString()}`);
  }

  async deleteGraphThread(input: { namespace: string; threadId: string }, fencingToken?: string): Promise<void> {
    const params = new URLSearchParams({ namespace: input.namespace, thread_id: input.threadId });
    await this.send<unknown>("DELETE", `/api/v1/graph/threads?${params.toString()}`, undefined, fencingToken);
  }

  // ── transport ──────────────────────────────────────────────────────────

  /** `traceparent` (and `tracestate`) from the option, else from the caller's active OpenTelemetry context. */
  private traceHeaders(): Record<string, string> {
    const option = this.options.traceparent;
    const given = typeof option === "function" ? option() : option;
    if (given !== undefined) return { traceparent: checkTraceparent(given) };
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    return carrier;
  }

  private async send<T>(method: Method, path: string, body?: unknown, fencingToken?: string): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.token}`,
      Accept: "application/json, application/problem+json",
    };
    if (fencingToken) headers["Fencing-Token"] = fencingToken;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    Object.assign(headers, this.traceHeaders());
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let lastFailure: unknown;
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      if (attempt > 0) await sleep(this.backoffMs(attempt));
      let res: Response;
      let text: string;
      try {
        res = await this.fetchImpl(url, {
          method,
          headers,
          body: payload,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        // The timeout covers the body too: headers without the body prove nothing.
        text = await res.text();
      } catch (error) {
        lastFailure = error;
        continue;
      }
      if (res.ok) return (text === "" ? undefined : JSON.parse(text)) as T;
      const apiError = apiErrorOf(res.status, res.headers.get("content-type"), text);
      if (!isRetryableStatus(res.status)) throw apiError;
      lastFailure = apiError;
    }
    if (isVerityApiError(lastFailure)) throw lastFailure;
    const why = lastFailure instanceof Error ? `${lastFailure.name}: ${lastFailure.message}` : String(lastFailure);
    throw new VerityNetworkError(
      `${method} ${path}: no answer after ${this.retries + 1} attempts (${why})`,
      this.retries + 1,
      lastFailure,
    );
  }

  private backoffMs(attempt: number): number {
    const ceiling = this.retryBaseDelayMs * 2 ** (attempt - 1);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }
}

function withToken<B extends object>(body: B, fencingToken: string | undefined): B & { fencing_token?: string } {
  return fencingToken ? { ...body, fencing_token: fencingToken } : body;
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

/** An id fixed before the first attempt, so every retry names the same request. */
function newClientId(prefix: string): string {
  return `${prefix}-${crypto.randomUUID()}`;
}
