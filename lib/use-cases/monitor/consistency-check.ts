import type { Db } from "@/lib/db/client";
import { getEnv } from "@/lib/config/env";
import type { Execution } from "@/lib/generated/prisma/client";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { recordMismatches, type ProviderRecord } from "@/lib/connectors/effects";
import {
  evidenceMatchesExecution,
  succeededStatuses,
  type ExecutionStatus,
} from "@/lib/model/executions/execution-rules";
import { inspectTaskRow } from "@/lib/model/monitor/task-row-findings";
import { evidenceProblem } from "@/lib/model/monitor/success-evidence";
import { formatDuration } from "@/lib/core/format-duration";
import { tools, ToolNameSchema } from "@/lib/model/executions/tools";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { findDuplicateRefunds } from "@/lib/connectors/sandbox/duplicate-refunds";
import {
  noteListSchema,
  refundListSchema,
  type SandboxNote,
  type SandboxRefund,
} from "@/lib/connectors/sandbox/contract";
import { findExecutions, tenantsOfExecutionReferences } from "@/lib/stores/execution-store";
import { openTaskRow } from "@/lib/stores/tasks/task-views";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";

/**
 * The consistency checker (`npm run check:consistency`, and the chaos and
 * crash tests): one read-only pass over the whole database, and optionally
 * the provider's own records, that says whether the state engine's promises
 * hold right now. Where the invariant monitor (run-monitor-pass.ts) walks
 * a bounded batch per pass and raises alerts for people, this reads
 * everything, writes nothing, and answers yes or no with every finding, so
 * a test or an operator after an incident can trust a "consistent".
 *
 * Something past its deadline that a person already owns (an open review,
 * an unresolved alert, a task waiting for a human) is not a finding: it is
 * listed under `withPeople`, since nothing is silently stuck there.
 */

export const consistencyChecks = [
  "transition_logs",
  "audit_chains",
  "task_states",
  "effects",
  "provider",
  "deadlines",
  "failure_reasons",
] as const;
export type ConsistencyCheck = (typeof consistencyChecks)[number];

export type FindingCode =
  // transition_logs
  | "task_without_transitions"
  | "transition_log_gap"
  | "transition_wrong_previous"
  | "transition_state_mismatch"
  | "transition_log_head_mismatch"
  | "transition_not_audited"
  // audit_chains
  | "audit_chain_broken"
  // task_states (the monitor's own inspection of a stored row)
  | "state_invariant_broken"
  | "completed_with_open_mandatory_subtask"
  // effects
  | "mandatory_effect_not_succeeded"
  | "effect_in_doubt_after_completion"
  | "success_without_evidence"
  | "failed_with_effect"
  // provider
  | "provider_effect_without_execution"
  | "provider_effect_without_success"
  | "provider_effect_differs"
  | "duplicate_provider_effect"
  | "success_missing_at_provider"
  // deadlines
  | "execution_past_deadline"
  | "frozen_without_review"
  | "task_abandoned"
  | "outbox_undelivered"
  // failure_reasons
  | "failed_without_reason";

export interface ConsistencyFinding {
  check: ConsistencyCheck;
  code: FindingCode;
  taskId: string | null;
  executionId: string | null;
  /** One sentence a person can act on. */
  message: string;
  details: Record<string, unknown>;
}

/** Past a deadline (or an effect the provider holds that the ledger has not settled), but a person or an alert already has it. */
export interface PersonInvolved {
  taskId: string;
  executionId: string | null;
  message: string;
  /** Who has it: "review <id> (OPEN)", "alert <id> (ESCALATED)", "task WAITING_FOR_HUMAN". */
  with: string[];
}

export interface CheckSummary {
  /** Rows, streams or provider records looked at. */
  examined: number;
  findings: number;
  /** Why the check did not run (the provider was not given). */
  skipped?: string;
}

export interface ConsistencyReport {
  ok: boolean;
  checkedAt: string;
  durationMs: number;
  counts: {
    tasks: number;
    transitions: number;
    executions: number;
    auditStreams: number;
    auditEntries: number;
    providerRefunds: number | null;
    providerNotes: number | null;
  };
  checks: Record<ConsistencyCheck, CheckSummary>;
  findings: ConsistencyFinding[];
  withPeople: PersonInvolved[];
  /** Effects the provider holds whose execution is not settled yet, but not due for reconciliation either: not a finding, yet. */
  settling: Array<{ taskId: string; executionId: string; message: string }>;
}

/** The provider's own records: every refund and every CRM note it holds. */
export interface ProviderRecords {
  refunds: readonly SandboxRefund[];
  notes: readonly SandboxNote[];
}

export interface ConsistencyOptions {
  now?: Date;
  /** The provider's records to compare with; without them the provider check is skipped. */
  provider?: ProviderRecords | null;
  /** When a SENT or INTENT_RECORDED execution is due for reconciliation; VERITY_SENT_TIMEOUT_MS by default. */
  sentTimeoutMs?: number;
  /**
   * How long past a deadline before it counts as stuck: the reconciler runs
   * every VERITY_RECONCILE_INTERVAL_MS, so something due is settled within a
   * tick or two. Default: two intervals, at least 10 s.
   */
  graceMs?: number;
  /**
   * Undelivered outbox messages older than this are stuck. Null (the default
   * when no VERITY_OUTBOX_WEBHOOK_URL is configured): messages are meant to
   * wait for a subscriber, so the outbox is not checked.
   */
  outboxDeadlineMs?: number | null;
  /** Findings kept per code (the report stays readable on a badly broken database); 200 by default. */
  maxFindingsPerCode?: number;
}

const succeeded = new Set<ExecutionStatus>(succeededStatuses);
/** Statuses where nobody knows yet whether the effect happened. */
const inDoubt = new Set<ExecutionStatus>(["INTENT_RECORDED", "SENT", "OUTCOME_UNKNOWN", "NEEDS_HUMAN"]);
const unresolvedAlertStatuses = ["OPEN", "ACKNOWLEDGED", "ESCALATED"] as const;
const openReviewStatuses = ["OPEN", "ESCALATED"] as const;
const BATCH = 1000;

export async function checkConsistency(db: Db, options: ConsistencyOptions = {}): Promise<ConsistencyReport> {
  const started = performance.now();
  const now = options.now ?? new Date();
  const env = getEnv();
  const ctx: CheckContext = {
    db,
    now,
    sentTimeoutMs: options.sentTimeoutMs ?? env.VERITY_SENT_TIMEOUT_MS,
    graceMs: options.graceMs ?? Math.max(10_000, 2 * env.VERITY_RECONCILE_INTERVAL_MS),
    outboxDeadlineMs:
      options.outboxDeadlineMs !== undefined
        ? options.outboxDeadlineMs
        : env.VERITY_OUTBOX_WEBHOOK_URL
          ? 15 * 60_000
          : null,
    findings: [],
    withPeople: [],
    settling: [],
    perCode: new Map(),
    maxPerCode: options.maxFindingsPerCode ?? 200,
    checks: Object.fromEntries(consistencyChecks.map((c) => [c, { examined: 0, findings: 0 }])) as Record<
      ConsistencyCheck,
      CheckSummary
    >,
  };
  const people = await loadPeople(db);
  const tasks = await loadTasks(db);
  const executions = await loadExecutions(db);

  await checkTransitionLogs(ctx);
  const audit = await checkAuditChains(ctx, executions);
  checkTaskStates(ctx, tasks);
  checkEffects(ctx, tasks, executions, people);
  if (options.provider) checkProvider(ctx, options.provider, executions, people);
  else ctx.checks.provider.skipped = "no provider records given (--provider-url)";
  await checkDeadlines(ctx, tasks, executions, people);
  await checkFailureReasons(ctx, tasks);

  const transitions = await db.transition.count();
  return {
    ok: ctx.findings.length === 0,
    checkedAt: now.toISOString(),
    durationMs: Math.round(performance.now() - started),
    counts: {
      tasks: tasks.size,
      transitions,
      executions: executions.length,
      auditStreams: audit.streams,
      auditEntries: audit.entries,
      providerRefunds: options.provider ? options.provider.refunds.length : null,
      providerNotes: options.provider ? options.provider.notes.length : null,
    },
    checks: ctx.checks,
    findings: ctx.findings,
    withPeople: ctx.withPeople,
    settling: ctx.settling,
  };
}

/**
 * Every refund and note the sandbox provider holds (GET /v1/refunds and
 * /v1/crm/notes without a key list everything, for consistency checks like
 * this one), parsed with the wire contract.
 */
export async function fetchProviderRecords(
  baseUrl: string,
  options: { timeoutMs?: number } = {},
): Promise<ProviderRecords> {
  const get = async (path: string) => {
    const res = await fetch(new URL(path, baseUrl), {
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      headers: { Accept: "application/json" },
    });
    if (!res.ok) throw new Error(`GET ${path} at the provider answered ${res.status}`);
    return res.json() as Promise<unknown>;
  };
  const [refunds, notes] = await Promise.all([get("/v1/refunds"), get("/v1/crm/notes")]);
  return { refunds: refundListSchema.parse(refunds).data, notes: noteListSchema.parse(notes).data };
}

/**
 * The provider's records that are the tenant's to judge. The provider
 * account is one for the deployment (as a platform's Stripe account is), so
 * its list holds every tenant's effects: compared whole with one tenant's
 * ledger, each other tenant's refund would read as an effect nobody
 * recorded. A record is the tenant's when the execution it names (its
 * metadata's execution id, else its idempotency key) is; one that names no
 * tenant's execution (made by hand at the provider) is judged by the first
 * tenant, as its webhook is received there
 * (lib/use-cases/reconciliation/provider-event-tenants.ts).
 */
export async function providerRecordsOfTenant(
  platformDb: Db,
  tenantId: string,
  records: ProviderRecords,
): Promise<ProviderRecords> {
  const all: ProviderRecord[] = [...records.refunds, ...records.notes];
  const owners = await tenantsOfExecutionReferences(platformDb, {
    executionIds: all.flatMap((r) => (r.metadata.execution_id ? [r.metadata.execution_id] : [])),
    idempotencyKeys: all.map((r) => r.idempotency_key),
  });
  const isTenants = (r: ProviderRecord) => {
    const owner =
      (r.metadata.execution_id ? owners.byId.get(r.metadata.execution_id) : undefined) ??
      owners.byKey.get(r.idempotency_key);
    return (owner ?? DEFAULT_TENANT_ID) === tenantId;
  };
  return { refunds: records.refunds.filter(isTenants), notes: records.notes.filter(isTenants) };
}

// ---------------------------------------------------------------------------

interface CheckContext {
  db: Db;
  now: Date;
  sentTimeoutMs: number;
  graceMs: number;
  outboxDeadlineMs: number | null;
  findings: ConsistencyFinding[];
  withPeople: PersonInvolved[];
  settling: ConsistencyReport["settling"];
  perCode: Map<FindingCode, number>;
  maxPerCode: number;
  checks: Record<ConsistencyCheck, CheckSummary>;
}

function report(
  ctx: CheckContext,
  finding: Omit<ConsistencyFinding, "executionId" | "details"> &
    Partial<Pick<ConsistencyFinding, "executionId" | "details">>,
): void {
  ctx.checks[finding.check].findings++;
  const seen = (ctx.perCode.get(finding.code) ?? 0) + 1;
  ctx.perCode.set(finding.code, seen);
  // Counted always, listed up to the cap: the summary still says how many.
  if (seen > ctx.maxPerCode) return;
  ctx.findings.push({ executionId: null, details: {}, ...finding });
}

type TaskRow = {
  id: string;
  status: string;
  version: number;
  state: unknown;
  workflowDigest: string;
  workflowName: string;
  updatedBy: string;
  updatedAt: Date;
};

async function loadTasks(db: Db): Promise<Map<string, TaskRow>> {
  const out = new Map<string, TaskRow>();
  let after: string | undefined;
  for (;;) {
    const rows = await db.task.findMany({
      where: after ? { id: { gt: after } } : {},
      orderBy: { id: "asc" },
      take: BATCH,
      select: {
        id: true,
        status: true,
        version: true,
        state: true,
        workflowDigest: true,
        workflowName: true,
        updatedBy: true,
        updatedAt: true,
      },
    });
    // Judged opened (the stored document holds sealed values); a value whose key is gone reads as such.
    for (const r of rows) out.set(r.id, await openTaskRow(db, r, "readable"));
    if (rows.length < BATCH) return out;
    after = rows[rows.length - 1]?.id;
  }
}

async function loadExecutions(db: Db): Promise<Execution[]> {
  const out: Execution[] = [];
  let after: string | undefined;
  for (;;) {
    const rows = await findExecutions(db, {
      where: after ? { id: { gt: after } } : {},
      orderBy: { id: "asc" },
      take: BATCH,
    });
    out.push(...rows);
    if (rows.length < BATCH) return out;
    after = rows[rows.length - 1]?.id;
  }
}

/** Who already has a task: its open reviews and unresolved alerts, by task and by execution. */
interface People {
  ofTask(taskId: string, status?: string): string[];
  ofExecution(executionId: string): string[];
  /** Both, each named once (an alert on an execution is also on its task). */
  ofBoth(taskId: string, status: string | undefined, executionId: string): string[];
}

async function loadPeople(db: Db): Promise<People> {
  const [reviews, alerts] = await Promise.all([
    db.review.findMany({
      where: { status: { in: [...openReviewStatuses] } },
      select: { id: true, taskId: true, executionId: true, status: true },
    }),
    db.divergenceAlert.findMany({
      where: { status: { in: [...unresolvedAlertStatuses] } },
      select: { id: true, taskId: true, executionId: true, status: true, kind: true },
    }),
  ]);
  const byTask = new Map<string, string[]>();
  const byExecution = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, key: string | null, what: string) => {
    if (key) map.set(key, [...(map.get(key) ?? []), what]);
  };
  for (const r of reviews) {
    add(byTask, r.taskId, `review ${r.id} (${r.status})`);
    add(byExecution, r.executionId, `review ${r.id} (${r.status})`);
  }
  for (const a of alerts) {
    add(byTask, a.taskId, `alert ${a.id} ${a.kind} (${a.status})`);
    add(byExecution, a.executionId, `alert ${a.id} ${a.kind} (${a.status})`);
  }
  const ofTask = (taskId: string, status?: string) => [
    ...(status === "WAITING_FOR_HUMAN" ? ["task WAITING_FOR_HUMAN"] : []),
    ...(byTask.get(taskId) ?? []),
  ];
  const ofExecution = (executionId: string) => byExecution.get(executionId) ?? [];
  return {
    ofTask,
    ofExecution,
    ofBoth: (taskId, status, executionId) => [...new Set([...ofTask(taskId, status), ...ofExecution(executionId)])],
  };
}

// ---------------------------------------------------------------------------
// Transition logs: versions 1..n without a gap, each row naming the version
// and status before it, its state document agreeing with its columns, the
// last row being the task row, and every row's audit entry present. Done in
// SQL so that only broken rows leave the database.
// ---------------------------------------------------------------------------

type BrokenLink = {
  task_id: string;
  id: string;
  from_version: number | null;
  to_version: number;
  from_status: string | null;
  to_status: string;
  state_version: string | null;
  state_status: string | null;
  prev_version: number | null;
  prev_status: string | null;
};

async function checkTransitionLogs(ctx: CheckContext): Promise<void> {
  const summary = ctx.checks.transition_logs;
  const links = await ctx.db.$queryRaw<BrokenLink[]>`
    WITH ordered AS (
      SELECT task_id, id, from_version, to_version, from_status, to_status,
             state_after->>'version' AS state_version, state_after->>'status' AS state_status,
             lag(to_version) OVER w AS prev_version, lag(to_status) OVER w AS prev_status,
             row_number() OVER w AS n
        FROM transitions
      WINDOW w AS (PARTITION BY task_id ORDER BY to_version))
    SELECT task_id, id, from_version, to_version, from_status, to_status, state_version, state_status, prev_version, prev_status
      FROM ordered
     WHERE (n = 1 AND (to_version <> 1 OR from_version IS NOT NULL OR from_status IS NOT NULL))
        OR (n > 1 AND (to_version <> prev_version + 1 OR from_version IS DISTINCT FROM prev_version OR from_status IS DISTINCT FROM prev_status))
        OR state_version IS DISTINCT FROM to_version::text OR state_status IS DISTINCT FROM to_status
     ORDER BY task_id, to_version
     LIMIT 5000`;
  for (const l of links) {
    const prev = l.prev_version;
    // (task_id, to_version) is unique, so a jump is always forward: versions are missing.
    if (prev === null ? l.to_version !== 1 : l.to_version !== prev + 1) {
      report(ctx, {
        check: "transition_logs",
        code: "transition_log_gap",
        taskId: l.task_id,
        message:
          prev === null
            ? `Task ${l.task_id}'s transition log starts at version ${l.to_version}, not 1: versions 1–${l.to_version - 1} are missing.`
            : `Task ${l.task_id}'s transition log jumps from version ${prev} to ${l.to_version}: version(s) ${prev + 1}–${l.to_version - 1} are missing.`,
        details: { transition_id: l.id, previous_version: l.prev_version, to_version: l.to_version },
      });
    } else if (l.from_version !== l.prev_version || l.from_status !== l.prev_status) {
      report(ctx, {
        check: "transition_logs",
        code: "transition_wrong_previous",
        taskId: l.task_id,
        message: `Transition ${l.id} of task ${l.task_id} (to version ${l.to_version}) says it came from version ${l.from_version ?? "none"} (${l.from_status ?? "none"}), but the log before it ends at ${l.prev_version ?? "nothing"} (${l.prev_status ?? "none"}).`,
        details: {
          transition_id: l.id,
          from_version: l.from_version,
          from_status: l.from_status,
          previous_version: l.prev_version,
          previous_status: l.prev_status,
        },
      });
    }
    if (l.state_version !== String(l.to_version) || l.state_status !== l.to_status) {
      report(ctx, {
        check: "transition_logs",
        code: "transition_state_mismatch",
        taskId: l.task_id,
        message: `Transition ${l.id} of task ${l.task_id} is logged as version ${l.to_version} (${l.to_status}), but the state it recorded says version ${l.state_version ?? "none"} (${l.state_status ?? "none"}).`,
        details: {
          transition_id: l.id,
          to_version: l.to_version,
          to_status: l.to_status,
          state_version: l.state_version,
          state_status: l.state_status,
        },
      });
    }
  }

  const heads = await ctx.db.$queryRaw<
    Array<{
      id: string;
      version: number;
      status: string;
      last_version: number | null;
      last_status: string | null;
      same_state: boolean | null;
    }>
  >`
    SELECT t.id, t.version, t.status, h.to_version AS last_version, h.to_status AS last_status, (h.state_after = t.state) AS same_state
      FROM tasks t
      LEFT JOIN LATERAL (SELECT to_version, to_status, state_after FROM transitions tr WHERE tr.task_id = t.id ORDER BY to_version DESC LIMIT 1) h ON true
     WHERE h.to_version IS NULL OR h.to_version <> t.version OR h.to_status <> t.status OR h.state_after <> t.state
     ORDER BY t.id
     LIMIT 5000`;
  for (const h of heads) {
    if (h.last_version === null) {
      report(ctx, {
        check: "transition_logs",
        code: "task_without_transitions",
        taskId: h.id,
        message: `Task ${h.id} (version ${h.version}, ${h.status}) has no transition log at all: not even its creation is recorded.`,
      });
      continue;
    }
    report(ctx, {
      check: "transition_logs",
      code: "transition_log_head_mismatch",
      taskId: h.id,
      message:
        h.last_version !== h.version || h.last_status !== h.status
          ? `Task ${h.id} is at version ${h.version} (${h.status}), but its log ends at version ${h.last_version} (${h.last_status}): a change was written without its transition, or a transition without its change.`
          : `Task ${h.id}'s stored state differs from the state its last transition (version ${h.version}) recorded: the row was changed outside the engine.`,
      details: {
        version: h.version,
        status: h.status,
        log_version: h.last_version,
        log_status: h.last_status,
        same_state: h.same_state,
      },
    });
  }

  // Each transition's audit entry (task.created / task.transitioned /
  // task.restored, details.transition_id). Retention may have cut the
  // oldest entries of a stream: a transition from before its anchor's cut
  // is not expected to have one any more.
  const unaudited = await ctx.db.$queryRaw<Array<{ task_id: string; id: string; to_version: number }>>`
    SELECT tr.task_id, tr.id, tr.to_version
      FROM transitions tr
      LEFT JOIN audit_entries a ON a.stream = 'task:' || tr.task_id AND a.subject_type = 'task' AND a.details->>'transition_id' = tr.id
      LEFT JOIN audit_anchors an ON an.stream = 'task:' || tr.task_id
     WHERE a.id IS NULL AND (an.stream IS NULL OR tr.created_at > an.cut_at)
     ORDER BY tr.task_id, tr.to_version
     LIMIT 5000`;
  for (const u of unaudited) {
    report(ctx, {
      check: "transition_logs",
      code: "transition_not_audited",
      taskId: u.task_id,
      message: `Transition ${u.id} of task ${u.task_id} (version ${u.to_version}) has no entry in the audit chain task:${u.task_id}.`,
      details: { transition_id: u.id, to_version: u.to_version },
    });
  }
  summary.examined = await ctx.db.transition.count();
}

// ---------------------------------------------------------------------------
// Audit chains: every stream, by the same walk as `npm run audit:verify`.
// ---------------------------------------------------------------------------

async function checkAuditChains(
  ctx: CheckContext,
  executions: readonly Execution[],
): Promise<{ streams: number; entries: number }> {
  const verification = await verifyAuditChains(ctx.db);
  ctx.checks.audit_chains.examined = verification.streams;
  const taskOfExecution = new Map(executions.map((e) => [e.id, e.taskId]));
  for (const brk of verification.breaks) {
    const [type, ...rest] = brk.stream.split(":");
    const id = rest.join(":");
    const taskId =
      type === "task" || type === "instruction_ledger"
        ? id
        : type === "execution"
          ? (taskOfExecution.get(id) ?? null)
          : null;
    report(ctx, {
      check: "audit_chains",
      code: "audit_chain_broken",
      taskId,
      executionId: type === "execution" ? id : null,
      message: `The audit chain ${brk.stream} is broken at seq ${brk.seq} (${brk.kind}): ${brk.message}`,
      details: { break: brk },
    });
  }
  return { streams: verification.streams, entries: verification.entries };
}

// ---------------------------------------------------------------------------
// Stored task states: TaskState v2, the workflow's state invariants (a
// completed task's mandatory subtasks among them) and the columns that
// repeat the document, judged by the monitor's own inspectTaskRow.
// ---------------------------------------------------------------------------

function checkTaskStates(ctx: CheckContext, tasks: ReadonlyMap<string, TaskRow>): void {
  for (const row of tasks.values()) {
    ctx.checks.task_states.examined++;
    for (const f of inspectTaskRow(row)) {
      report(ctx, {
        check: "task_states",
        code:
          f.kind === "completed_with_open_mandatory_subtask"
            ? "completed_with_open_mandatory_subtask"
            : "state_invariant_broken",
        taskId: row.id,
        message: f.message,
        details: { external: f.external },
      });
    }
  }
}

// ---------------------------------------------------------------------------
// Effects: a task that ended in success has every effect it depends on
// succeeded, with evidence naming the execution; a task that ended in
// failure has no irreversible effect that happened.
// ---------------------------------------------------------------------------

/**
 * The effects a completion depends on. An irreversible tool call (tools.ts:
 * money left) is never optional: the refund workflow's mandatory subtask
 * stands for it. A reversible call is mandatory when its tool call id names
 * a mandatory subtask of the task; otherwise (the customer note) it may
 * have failed, but never still be in doubt.
 */
export function isMandatoryEffect(
  execution: Pick<Execution, "tool" | "toolCallId" | "irreversible">,
  mandatorySubtasks: ReadonlySet<string>,
): boolean {
  const known = ToolNameSchema.safeParse(execution.tool);
  const irreversible = known.success ? tools[known.data].irreversible : execution.irreversible;
  return irreversible || mandatorySubtasks.has(execution.toolCallId);
}

/** A status that means the task failed (FAILED, PERMANENTLY_FAILED, delivery's failed): a person will ask why. (SQL twin: ILIKE '%fail%'.) */
export function isFailureStatus(status: string): boolean {
  return /fail/i.test(status);
}

function checkEffects(
  ctx: CheckContext,
  tasks: ReadonlyMap<string, TaskRow>,
  executions: readonly Execution[],
  people: People,
): void {
  const summary = ctx.checks.effects;
  // Effects undone by a compensation known to have happened: the money came back.
  const compensated = new Set(
    executions.filter((e) => e.compensatesId !== null && succeeded.has(e.status)).map((e) => e.compensatesId),
  );
  for (const e of executions) {
    summary.examined++;
    const task = tasks.get(e.taskId);
    if (succeeded.has(e.status)) {
      const problem = evidenceMatchesExecution(e.evidence, e)
        ? evidenceProblem(e.evidence, e)
        : "names neither this execution nor its idempotency key";
      if (problem) {
        report(ctx, {
          check: "effects",
          code: "success_without_evidence",
          taskId: e.taskId,
          executionId: e.id,
          message: `${e.tool} (${e.toolCallId}) of task ${e.taskId} is recorded ${e.status}, but its evidence ${e.evidence === null ? "is missing" : problem}.`,
          details: { execution_status: e.status, idempotency_key: e.idempotencyKey, evidence: e.evidence },
        });
      }
    }
    if (!task) continue;
    const def = getWorkflowByDigest(task.workflowDigest);
    const state = def?.states[task.status];
    if (state?.success) {
      const mandatory = new Set(mandatorySubtaskIds(task.state));
      if (isMandatoryEffect(e, mandatory) && !succeeded.has(e.status)) {
        report(ctx, {
          check: "effects",
          code: "mandatory_effect_not_succeeded",
          taskId: e.taskId,
          executionId: e.id,
          message: `Task ${e.taskId} is ${task.status}, but its ${e.irreversible ? "irreversible " : ""}${e.tool} call ${e.toolCallId} is ${e.status}: the completion claims an effect that did not (or not provably) happen.`,
          details: { task_status: task.status, execution_status: e.status, idempotency_key: e.idempotencyKey },
        });
      } else if (inDoubt.has(e.status) && e.status !== "INTENT_RECORDED") {
        report(ctx, {
          check: "effects",
          code: "effect_in_doubt_after_completion",
          taskId: e.taskId,
          executionId: e.id,
          message: `Task ${e.taskId} is ${task.status} while its ${e.tool} call ${e.toolCallId} is still ${e.status}: nobody knows whether that effect happened.`,
          details: { task_status: task.status, execution_status: e.status },
        });
      }
    } else if (isFailureStatus(task.status) && e.irreversible && succeeded.has(e.status) && !compensated.has(e.id)) {
      const owners = people.ofBoth(e.taskId, task.status, e.id);
      const message = `Task ${e.taskId} is ${task.status}, yet its irreversible ${e.tool} call ${e.toolCallId} is ${e.status}: the money left and the task says it failed.`;
      if (owners.length > 0) ctx.withPeople.push({ taskId: e.taskId, executionId: e.id, message, with: owners });
      else
        report(ctx, {
          check: "effects",
          code: "failed_with_effect",
          taskId: e.taskId,
          executionId: e.id,
          message,
          details: { task_status: task.status, execution_status: e.status },
        });
    }
  }
}

function mandatorySubtaskIds(state: unknown): string[] {
  const subtasks = (state as { subtasks?: unknown } | null)?.subtasks;
  if (!Array.isArray(subtasks)) return [];
  return subtasks
    .filter(
      (s): s is { id: string; mandatory: true } =>
        !!s &&
        typeof s === "object" &&
        (s as { mandatory?: unknown }).mandatory === true &&
        typeof (s as { id?: unknown }).id === "string",
    )
    .map((s) => s.id);
}

// ---------------------------------------------------------------------------
// The provider's records against the ledger: every effect the provider
// holds is a succeeded execution's (same key, same request), one effect per
// execution, and every succeeded execution's effect is there.
// ---------------------------------------------------------------------------

const providerTool = { refunds: "payments.refund", notes: "crm.add_note" } as const;

function checkProvider(
  ctx: CheckContext,
  provider: ProviderRecords,
  executions: readonly Execution[],
  people: People,
): void {
  const summary = ctx.checks.provider;
  const byKey = new Map(executions.map((e) => [e.idempotencyKey, e]));
  const heldKeys = new Set<string>();
  const judge = (kind: keyof typeof providerTool, record: ProviderRecord) => {
    summary.examined++;
    heldKeys.add(record.idempotency_key);
    const what = `${kind === "refunds" ? "refund" : "note"} ${record.id}`;
    const execution = byKey.get(record.idempotency_key);
    if (!execution) {
      report(ctx, {
        check: "provider",
        code: "provider_effect_without_execution",
        taskId: record.metadata.task_id ?? null,
        executionId: record.metadata.execution_id ?? null,
        message: `The provider holds ${what} under key ${record.idempotency_key}, which no execution of this database has: an effect nobody recorded.`,
        details: { record },
      });
      return;
    }
    const mismatches = execution.tool === providerTool[kind] ? recordMismatches(execution, record) : ["tool"];
    if (mismatches.length > 0) {
      report(ctx, {
        check: "provider",
        code: "provider_effect_differs",
        taskId: execution.taskId,
        executionId: execution.id,
        message: `The provider's ${what} under key ${record.idempotency_key} differs from what execution ${execution.id} (${execution.tool}) asked for, in ${mismatches.join(", ")}.`,
        details: { mismatches, record, request: execution.request },
      });
    }
    if (succeeded.has(execution.status)) return;
    const pending = pendingReconciliation(ctx, execution);
    const owners = people.ofExecution(execution.id);
    const message = `The provider holds ${what} under key ${record.idempotency_key}, but execution ${execution.id} of task ${execution.taskId} is ${execution.status}${pending ? ` (due for reconciliation ${pending.when})` : ""}.`;
    if (pending && !pending.overdue)
      return void ctx.settling.push({ taskId: execution.taskId, executionId: execution.id, message });
    if (owners.length > 0)
      ctx.withPeople.push({ taskId: execution.taskId, executionId: execution.id, message, with: owners });
    else
      report(ctx, {
        check: "provider",
        code: "provider_effect_without_success",
        taskId: execution.taskId,
        executionId: execution.id,
        message,
        details: { execution_status: execution.status, record },
      });
  };
  for (const r of provider.refunds) judge("refunds", r);
  for (const n of provider.notes) judge("notes", n);

  const duplicates = findDuplicateRefunds(provider.refunds);
  for (const d of duplicates.byExecution) {
    report(ctx, {
      check: "provider",
      code: "duplicate_provider_effect",
      taskId: byExecutionId(executions, d.executionId)?.taskId ?? null,
      executionId: d.executionId,
      message: `The provider made ${d.refundIds.length} refunds of charge ${d.chargeId} for execution ${d.executionId} (${d.refundIds.join(", ")}): the effect happened more than once.`,
      details: { ...d },
    });
  }
  for (const d of duplicates.byIdempotencyKey) {
    report(ctx, {
      check: "provider",
      code: "duplicate_provider_effect",
      taskId: byKey.get(d.idempotencyKey)?.taskId ?? null,
      executionId: byKey.get(d.idempotencyKey)?.id ?? null,
      message: `The provider holds ${d.refundIds.length} refunds under one idempotency key ${d.idempotencyKey} (${d.refundIds.join(", ")}).`,
      details: { ...d },
    });
  }
  for (const e of executions) {
    if (!succeeded.has(e.status) || heldKeys.has(e.idempotencyKey)) continue;
    if (e.tool !== providerTool.refunds && e.tool !== providerTool.notes) continue;
    report(ctx, {
      check: "provider",
      code: "success_missing_at_provider",
      taskId: e.taskId,
      executionId: e.id,
      message: `Execution ${e.id} (${e.tool} of task ${e.taskId}) is ${e.status}, but the provider holds nothing under its key ${e.idempotencyKey}.`,
      details: { execution_status: e.status, idempotency_key: e.idempotencyKey },
    });
  }
}

function byExecutionId(executions: readonly Execution[], id: string): Execution | undefined {
  return executions.find((e) => e.id === id);
}

/**
 * For an execution whose outcome the reconciler settles: whether it is past
 * its due time by more than the grace ("overdue"), and when it is due, in
 * words. Null for a status the reconciler does not take.
 */
function pendingReconciliation(ctx: CheckContext, e: Execution): { overdue: boolean; when: string } | null {
  const due = reconcileDueAt(ctx, e);
  if (!due) return null;
  const late = ctx.now.getTime() - due.getTime();
  if (late > ctx.graceMs) return { overdue: true, when: `overdue by ${formatDuration(late)}` };
  return { overdue: false, when: late >= 0 ? "now" : `in ${formatDuration(-late)}` };
}

function reconcileDueAt(ctx: CheckContext, e: Execution): Date | null {
  switch (e.status) {
    case "OUTCOME_UNKNOWN":
      return e.updatedAt;
    case "SENT":
      return new Date((e.sentAt ?? e.updatedAt).getTime() + ctx.sentTimeoutMs);
    case "INTENT_RECORDED":
      return new Date(e.updatedAt.getTime() + ctx.sentTimeoutMs);
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------
// Deadlines: nothing past its timeout without a person or an alert.
// ---------------------------------------------------------------------------

async function checkDeadlines(
  ctx: CheckContext,
  tasks: ReadonlyMap<string, TaskRow>,
  executions: readonly Execution[],
  people: People,
): Promise<void> {
  const summary = ctx.checks.deadlines;
  const stuck = (
    taskId: string | null,
    executionId: string | null,
    code: FindingCode,
    message: string,
    details: Record<string, unknown>,
    owners: string[],
  ) => {
    if (owners.length > 0 && taskId) ctx.withPeople.push({ taskId, executionId, message, with: owners });
    else report(ctx, { check: "deadlines", code, taskId, executionId, message, details });
  };

  const reviews = await ctx.db.review.findMany({ select: { executionId: true, status: true, id: true } });
  const reviewOf = new Map(reviews.map((r) => [r.executionId, r]));
  const unresolvedByTask = new Set<string>();
  for (const e of executions) {
    summary.examined++;
    const task = tasks.get(e.taskId);
    if (inDoubt.has(e.status) && e.status !== "INTENT_RECORDED") unresolvedByTask.add(e.taskId);
    const owners = people.ofBoth(e.taskId, task?.status, e.id);
    if (e.status === "NEEDS_HUMAN") {
      const review = reviewOf.get(e.id);
      const age = ctx.now.getTime() - e.updatedAt.getTime();
      if ((!review || !(openReviewStatuses as readonly string[]).includes(review.status)) && age > ctx.graceMs) {
        report(ctx, {
          check: "deadlines",
          code: "frozen_without_review",
          taskId: e.taskId,
          executionId: e.id,
          message: `${e.tool} (${e.toolCallId}) of task ${e.taskId} has been frozen for a person (NEEDS_HUMAN) for ${formatDuration(age)}, but ${review ? `its review ${review.id} is ${review.status}` : "no review was ever opened"}: nobody is asked to decide.`,
          details: { review: review ?? null },
        });
      }
      continue;
    }
    const due = reconcileDueAt(ctx, e);
    if (!due) continue;
    const late = ctx.now.getTime() - due.getTime();
    if (late <= ctx.graceMs) continue;
    stuck(
      e.taskId,
      e.id,
      "execution_past_deadline",
      `${e.tool} (${e.toolCallId}) of task ${e.taskId} is ${e.status} ${formatDuration(late)} past the moment the reconciler should have settled it (${due.toISOString()}).`,
      { execution_status: e.status, due_at: due.toISOString(), sent_at: e.sentAt, updated_at: e.updatedAt },
      owners,
    );
  }

  // A task whose worker's lease ran out and which nobody has touched since:
  // no process will come back for it. (FAILED and terminal tasks rest by
  // design; a task waiting for a person is with one.)
  const leases = await ctx.db.lease.findMany({ select: { taskId: true, holder: true, expiresAt: true } });
  for (const lease of leases) {
    const task = tasks.get(lease.taskId);
    if (!task) continue;
    const def = getWorkflowByDigest(task.workflowDigest);
    if (def?.states[task.status]?.terminal || isFailureStatus(task.status)) continue;
    summary.examined++;
    const idleSince = Math.max(lease.expiresAt.getTime(), task.updatedAt.getTime());
    const idle = ctx.now.getTime() - idleSince;
    if (lease.expiresAt.getTime() >= ctx.now.getTime() || idle <= ctx.graceMs) continue;
    if (task.status === "RECONCILING" && unresolvedByTask.has(task.id)) continue; // the execution's own deadline speaks for it
    stuck(
      task.id,
      null,
      "task_abandoned",
      `Task ${task.id} has been ${task.status} for ${formatDuration(idle)} since ${lease.holder}'s lease expired (${lease.expiresAt.toISOString()}), and nobody has worked on it since.`,
      {
        task_status: task.status,
        lease_holder: lease.holder,
        lease_expired_at: lease.expiresAt.toISOString(),
        updated_at: task.updatedAt.toISOString(),
      },
      people.ofTask(task.id, task.status),
    );
  }
  // RECONCILING with nothing left to reconcile, leased or not: the reconciler moves a task on when it settles its call.
  for (const task of tasks.values()) {
    if (task.status !== "RECONCILING" || unresolvedByTask.has(task.id)) continue;
    const idle = ctx.now.getTime() - task.updatedAt.getTime();
    if (idle <= ctx.graceMs) continue;
    stuck(
      task.id,
      null,
      "task_abandoned",
      `Task ${task.id} has been RECONCILING for ${formatDuration(idle)} with no execution left in doubt: nothing will move it on.`,
      { task_status: task.status, updated_at: task.updatedAt.toISOString() },
      people.ofTask(task.id, task.status),
    );
  }

  if (ctx.outboxDeadlineMs !== null) {
    const cutoff = new Date(ctx.now.getTime() - ctx.outboxDeadlineMs);
    const late = await ctx.db.outboxMessage.findMany({
      where: { deliveredAt: null, createdAt: { lt: cutoff } },
      orderBy: { createdAt: "asc" },
      take: 500,
    });
    summary.examined += late.length;
    for (const m of late) {
      stuck(
        m.taskId,
        null,
        "outbox_undelivered",
        `Outbox message ${m.id} (${m.topic}) has waited ${formatDuration(ctx.now.getTime() - m.createdAt.getTime())} undelivered after ${m.attempts} attempt(s)${m.lastError ? `; last error: ${m.lastError.slice(0, 200)}` : ""}.`,
        { topic: m.topic, attempts: m.attempts, last_error: m.lastError, created_at: m.createdAt.toISOString() },
        // Whoever has the task, nobody has the announcement: subscribers wait for it.
        [],
      );
    }
  }
}

// ---------------------------------------------------------------------------
// Failure reasons: a failed task says why, in words.
// ---------------------------------------------------------------------------

/**
 * Whether a recorded reason tells a person something: at least two words
 * and a few letters, not a bare code, an empty string or a stringified
 * object.
 */
export function isReadableReason(reason: string | null | undefined): boolean {
  const text = (reason ?? "").trim();
  if (text.length < 8) return false;
  if (/^\[object \w+\]$/.test(text) || /^(undefined|null|error|failed|unknown)$/i.test(text)) return false;
  const words = text.split(/\s+/).filter((w) => /[A-Za-z]{2,}/.test(w));
  return words.length >= 2;
}

async function checkFailureReasons(ctx: CheckContext, tasks: ReadonlyMap<string, TaskRow>): Promise<void> {
  const failed = [...tasks.values()].filter((t) => isFailureStatus(t.status));
  ctx.checks.failure_reasons.examined = failed.length;
  if (failed.length === 0) return;
  // The transition that entered the current status: the latest one to it.
  const entered = await ctx.db.$queryRaw<
    Array<{ task_id: string; id: string; reason: string | null; actor: string; to_version: number }>
  >`
    SELECT DISTINCT ON (tr.task_id) tr.task_id, tr.id, tr.reason, tr.actor, tr.to_version
      FROM transitions tr JOIN tasks t ON t.id = tr.task_id AND t.status = tr.to_status
     WHERE t.status ILIKE '%fail%'
     ORDER BY tr.task_id, tr.to_version DESC`;
  const byTask = new Map(entered.map((e) => [e.task_id, e]));
  for (const task of failed) {
    const t = byTask.get(task.id);
    if (t && isReadableReason(t.reason)) continue;
    report(ctx, {
      check: "failure_reasons",
      code: "failed_without_reason",
      taskId: task.id,
      message: t
        ? `Task ${task.id} is ${task.status}, and the transition that made it so (version ${t.to_version}, by ${t.actor}) gives ${t.reason?.trim() ? `only "${t.reason.trim().slice(0, 80)}"` : "no reason"}: a person cannot tell why it failed.`
        : `Task ${task.id} is ${task.status}, and no transition into ${task.status} is logged: nobody can tell why it failed.`,
      details: { task_status: task.status, transition_id: t?.id ?? null, reason: t?.reason ?? null },
    });
  }
}
