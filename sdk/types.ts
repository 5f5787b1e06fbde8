/**
 * The SDK's types. Resources are the API's wire shapes, imported as types
 * from the schemas the server serializes with (lib/adapters/api/*-resources.ts), so
 * the SDK cannot drift from what the routes return; nothing of the server
 * is loaded at run time. Inputs are camelCase at the top level; nested
 * domain documents (a patch, subtasks) are in their wire form.
 */
import type { LeaseResource } from "@/lib/adapters/api/lease-resources";
import type {
  ExecutionDetail,
  ExecutionResource,
  IntentResultResource,
  OutcomeResultResource,
} from "@/lib/adapters/api/execution-resources";
import type { TaskResource, TransitionResource } from "@/lib/adapters/api/task-resources";
import type {
  InstructionGuardResource,
  InstructionLedgerResource,
  InstructionResource,
  RecordInstructionResultResource,
} from "@/lib/adapters/api/instruction-resources";
import type { TaskPatch } from "@/lib/model/tasks/task-state";
import type { ToolName as BuiltInToolName } from "@/lib/model/executions/tools";

/** A built-in tool, or any tool registered on the server (GET /api/v1/tools); `string & {}` keeps the built-ins' completion. */
export type ToolName = BuiltInToolName | (string & {});

export type {
  InstructionGuardResource as InstructionGuard,
  InstructionLedgerResource as InstructionLedger,
  InstructionResource as Instruction,
  RecordInstructionResultResource as RecordInstructionResult,
};
export type {
  ExecutionDetail,
  ExecutionResource as Execution,
  IntentResultResource as IntentResult,
  LeaseResource as Lease,
  TaskResource as Task,
  TaskPatch,
  TransitionResource as Transition,
};

export interface TransitionResult {
  task: TaskResource;
  transition: TransitionResource;
  replayed: boolean;
}

export interface TransitionPage {
  items: TransitionResource[];
  next_after_version: number | null;
}

export interface TaskPage {
  items: TaskResource[];
  next_cursor: string | null;
}

/** `lease_conflict` set: the outcome is recorded, but the task was not moved because your lease was taken over. */
export type OutcomeResult = OutcomeResultResource;

/** POST /tasks/{id}/tool-calls: Verity called the tool (`performed`), or did not (`receipt`, `blocked`, as an intent answers). */
export type PerformedToolCall =
  | (OutcomeResultResource & { kind: "performed"; outcome: "succeeded" | "failed" | "unknown" })
  | Exclude<IntentResultResource, { kind: "proceed" }>;

/** The intent's body without `send` (Verity sends it), and where the task goes after a success. */
export type PerformToolCallBody = Omit<RecordIntentBody, "send"> & { next_status?: "RUNNING" | "VALIDATING" };
export type LeaseConflictNotice = NonNullable<OutcomeResultResource["lease_conflict"]>;

export interface NewSubtask {
  id: string;
  title: string;
  mandatory: boolean;
  status?: "PENDING" | "ACTIVE" | "COMPLETED" | "FAILED" | "CANCELLED";
}

export interface CreateTaskInput {
  workflow: string;
  /** Chosen by the SDK when omitted, so a retried create is recognised as the same one. */
  taskId?: string;
  intentId: string;
  subtasks?: NewSubtask[];
  artifacts?: Record<string, unknown>;
  budget?: { currency_committed_usd: number };
  activeAgents?: string[];
}

export interface TransitionInput {
  expectedVersion: number;
  /** Omitted: an in-place update. */
  to?: string;
  patch?: TaskPatch;
  reason?: string;
  /** Chosen by the SDK when omitted; every retry of this call sends the same one. */
  transitionId?: string;
  fencingToken?: string;
}

export interface ListTasksQuery {
  status?: string;
  workflow?: string;
  q?: string;
  cursor?: string;
  limit?: number;
}

export interface RecordIntentBody {
  tool_call_id: string;
  tool: ToolName;
  request: Record<string, unknown>;
  expected_version: number;
  fencing_token?: string;
  /** The task instruction the call relies on: an irreversible call whose instruction is no longer current is frozen for review. */
  instruction_id?: string;
  /** A compensation: the known-succeeded execution of this task it undoes (its tool's compensating tool). */
  compensates_execution_id?: string;
  /** Ask a person to approve this call before it is sent: it is frozen into the review queue with this reason. */
  approval?: { reason: string };
  /** Mark the attempt SENT with the intent (no markSent after it): one request fewer; if the answer is lost, the attempt waits for reconciliation. */
  send?: boolean;
}

export interface RecordInstructionInput {
  /** The ledger seq you read (InstructionLedger.seq; 0 when empty). */
  expectedSeq: number;
  topic: string;
  directive: "allow" | "forbid" | "note";
  text: string;
  /** An agent: `user` when relaying the requester's own words (authorized), `agent_memory` (default) for its own memory (never authorized). */
  source?: "user" | "operator" | "agent_memory" | "system";
  /** Chosen by the SDK when omitted; every retry of this call sends the same one. */
  instructionId?: string;
}

export interface RecordOutcomeBody {
  attempt_id: string;
  outcome: "succeeded" | "failed" | "unknown";
  result?: Record<string, unknown>;
  evidence?: Record<string, unknown>;
  error?: string;
  next_status?: "RUNNING" | "VALIDATING";
  fencing_token?: string;
}

export interface InboundEvent {
  eventId: string;
  source: string;
  type: string;
  taskId?: string;
  payload: Record<string, unknown>;
}

/**
 * The ledger calls of the tool protocol: what executeTool needs from
 * Verity. VerityClient implements it over HTTP.
 */
export interface ExecutionLedger {
  recordIntent(taskId: string, body: RecordIntentBody): Promise<IntentResultResource>;
  markSent(executionId: string, attemptId: string, fencingToken?: string): Promise<ExecutionResource>;
  recordOutcome(executionId: string, body: RecordOutcomeBody): Promise<OutcomeResult>;
  getExecution(executionId: string): Promise<ExecutionDetail>;
  getTask(taskId: string): Promise<TaskResource>;
}
