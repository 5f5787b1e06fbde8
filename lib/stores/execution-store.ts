import { blindIndexOf } from "@/lib/stores/blind-index";
import { awaitedLater, directQuery, tenantOfConnection, type Db, type Tx } from "@/lib/db/client";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";
import { AppError } from "@/lib/core/errors";
import { Prisma, type Execution, type ExecutionEvent } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { countEffectOutcome } from "@/lib/config/metrics";
import { digestOf } from "@/lib/core/canonical-json";
import type { Actor } from "@/lib/model/actor";
import { executionAuditEntry } from "@/lib/model/audit/audit-events";
import { auditEntryInsertSql } from "@/lib/stores/audit-log";
import {
  canMoveExecution,
  retryAdviceOf,
  type ExecutionStatus,
  type RetryAdvice,
} from "@/lib/model/executions/execution-rules";
import { getInstructionsByIds, type InstructionBlock, type InstructionView } from "@/lib/stores/instructions";
import { openJson, openText, readableJson, readableText, sealJson, sealText } from "@/lib/stores/field-encryption";
import { reservationReleasedStatuses, type Reservation } from "@/lib/model/executions/budget-reservation";

/**
 * The owner of `executions` and `execution_events` rows: every status move
 * is a CAS on the execution's version with its event and audit entry in the
 * same transaction (moveExecution), and the reads every use case shares.
 * The use cases that decide the moves (intent, sent, outcome:
 * lib/use-cases/executions/; reviews' decisions: lib/use-cases/reviews/; the
 * reconciler; corrections) build on this module, so none of them needs
 * another's.
 *
 * Sealed at rest (docs/encryption.md): a call's request, result, evidence
 * and error, and each event's reason and evidence, are what the provider
 * and the people deciding said about a customer's money; they are sealed
 * here when written and opened here when read. An `Execution` row outside
 * this module is always opened: read it with getExecutionRowOrThrow,
 * findExecution or findExecutions, never with `db.execution` directly
 * (a `select` of other columns is fine). The request digest
 * (idempotency) is computed over the plaintext request, as before.
 */

/** The execution ledger's own moves (a failure handed to people, a task moved on after a correction): a system identity, so no worker's lease fences them. */
export const ledgerActor: Actor = { identity: "spiffe://verity.local/system/execution-ledger", kind: "system" };

export interface ExecutionView {
  id: string;
  taskId: string;
  toolCallId: string;
  attempt: number;
  attemptId: string;
  idempotencyKey: string;
  tool: string;
  /** The tool version the call was recorded under (null: recorded before the registry, a built-in's). */
  toolVersion?: number | null;
  irreversible: boolean;
  request: Record<string, unknown>;
  status: ExecutionStatus;
  version: number;
  result: unknown;
  evidence: unknown;
  error: string | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  sentAt: Date | null;
  settledAt: Date | null;
  /** The instruction the call relies on, if it named one. */
  instructionId?: string | null;
  /** The known-succeeded execution of the same task this one undoes (lib/use-cases/executions/compensation.ts), if it is a compensation. */
  compensatesId?: string | null;
  /** For a settled failure (FAILED, RECONCILED_FAILED): whether a new attempt under the same key is safe now, and why; null otherwise. */
  retry?: RetryAdvice | null;
}

/** The instructions behind a blocked call, for the agent and the review. */
export interface InstructionGuardView {
  kind: InstructionBlock["kind"];
  topic: string;
  reliedOn: InstructionView | null;
  current: InstructionView | null;
}

type SealedExecutionColumn = "request" | "result" | "evidence" | "error";

/** Where an execution's confidential value is sealed: the context of its envelope. */
function executionContext(column: SealedExecutionColumn, executionId: string): string {
  return `executions.${column}:${executionId}`;
}

function eventContext(column: "reason" | "evidence", eventId: string): string {
  return `execution_events.${column}:${eventId}`;
}

/** Prisma's markers for a JSON null are objects: they are written as they are, never sealed. */
function isJsonNullMarker(value: unknown): boolean {
  return value === Prisma.JsonNull || value === Prisma.DbNull || value === Prisma.AnyNull;
}

/** The columns of a write with each confidential value sealed for `executionId`'s row; the others as given. */
async function sealedExecutionData<T extends Partial<Record<SealedExecutionColumn, unknown>>>(
  tx: Tx,
  executionId: string,
  data: T,
): Promise<T> {
  const sealed: Record<string, unknown> = { ...data };
  for (const column of ["request", "result", "evidence"] as const) {
    const value = data[column];
    if (value !== undefined && !isJsonNullMarker(value))
      sealed[column] = await sealJson(tx, executionContext(column, executionId), value);
  }
  if (typeof data.error === "string")
    sealed.error = await sealText(tx, executionContext("error", executionId), data.error);
  return sealed as T;
}

/** How a read opens a sealed value: strictly (the engine) or readably (people and callers). */
interface Openers {
  json: (db: Db | Tx, stored: unknown, context: string) => Promise<unknown>;
  text: (db: Db | Tx, stored: string, context: string) => Promise<string>;
}

async function openedWith(db: Db | Tx, row: Execution, open: Openers): Promise<Execution> {
  const [request, result, evidence, error] = await Promise.all([
    open.json(db, row.request, executionContext("request", row.id)),
    open.json(db, row.result, executionContext("result", row.id)),
    open.json(db, row.evidence, executionContext("evidence", row.id)),
    row.error === null ? null : open.text(db, row.error, executionContext("error", row.id)),
  ]);
  return { ...row, request, result, evidence, error } as Execution;
}

/**
 * The row with its confidential values opened, for the engine's decisions:
 * a value that does not open (its key gone, or altered) fails the read
 * (key_unavailable / invariant_violated), never a guess.
 */
function openExecution(db: Db | Tx, row: Execution): Promise<Execution> {
  return openedWith(db, row, { json: openJson, text: openText });
}

/**
 * The row opened for a page or an API answer: a value whose key was
 * destroyed (crypto-shredding) reads "[sealed value, unreadable: …]" in its
 * place, and the rest of the row is shown.
 */
function readableExecution(db: Db | Tx, row: Execution): Promise<Execution> {
  return openedWith(db, row, { json: readableJson, text: readableText });
}

/** An execution row, opened (see the module's comment); null when there is none. */
export async function findExecution(db: Db | Tx, where: Prisma.ExecutionWhereInput): Promise<Execution | null> {
  const row = await db.execution.findFirst({ where });
  return row ? openExecution(db, row) : null;
}

/**
 * The columns of an `Execution` as Prisma names and types them, for the
 * ledger's own statements (directQuery: prepared, on node-postgres, without
 * Prisma's query layer; issue 16). The fencing token comes back as text,
 * the same from node-postgres and from PGlite through Prisma, and is made a
 * bigint again by executionOfRow.
 */
const executionColumns = Prisma.sql`tenant_id AS "tenantId", id, task_id AS "taskId", tool_call_id AS "toolCallId",
  attempt, attempt_id AS "attemptId", idempotency_key AS "idempotencyKey", tool, irreversible, request,
  request_digest AS "requestDigest", status::text AS status, version, result, evidence, error, created_by AS "createdBy",
  created_at AS "createdAt", updated_at AS "updatedAt", sent_at AS "sentAt", settled_at AS "settledAt",
  instruction_id AS "instructionId", lease_token::text AS "leaseToken", tool_version AS "toolVersion",
  compensates_id AS "compensatesId", reserved_minor AS "reservedMinor", reserved_currency AS "reservedCurrency",
  customer_index AS "customerIndex"`;

type ExecutionRow = Omit<Execution, "leaseToken"> & { leaseToken: string | null };

function executionOfRow(row: ExecutionRow): Execution {
  return { ...row, leaseToken: row.leaseToken === null ? null : BigInt(row.leaseToken) };
}

/** The execution of a task's tool call (its natural key), opened; null when the call was never recorded. */
export async function findExecutionOfCall(db: Db | Tx, taskId: string, toolCallId: string): Promise<Execution | null> {
  const [row] = await directQuery<ExecutionRow>(
    db,
    Prisma.sql`SELECT ${executionColumns} FROM executions WHERE task_id = ${taskId} AND tool_call_id = ${toolCallId}`,
    { prepare: "execution_of_call" },
  );
  return row ? openExecution(db, executionOfRow(row)) : null;
}

/** Execution rows, opened (see the module's comment). */
export async function findExecutions(
  db: Db | Tx,
  args: Omit<Prisma.ExecutionFindManyArgs, "select" | "include" | "omit">,
): Promise<Execution[]> {
  const rows = await db.execution.findMany(args);
  return Promise.all(rows.map((row) => openExecution(db, row)));
}

/** Execution rows as people and callers read them (readableExecution), as views: a list's export. */
export async function findReadableExecutionViews(
  db: Db | Tx,
  args: Omit<Prisma.ExecutionFindManyArgs, "select" | "include" | "omit">,
): Promise<ExecutionView[]> {
  return readableExecutionViews(db, await db.execution.findMany(args));
}

/** Execution rows opened for people and callers (readableExecution), as views. */
export async function readableExecutionViews(db: Db | Tx, rows: readonly Execution[]): Promise<ExecutionView[]> {
  return Promise.all(rows.map(async (row) => toExecutionView(await readableExecution(db, row))));
}

/** An execution's event as people and callers read it: its reason and evidence opened (readable, see readableExecution). */
async function readableEvent(db: Db | Tx, event: ExecutionEvent): Promise<ExecutionEvent> {
  const [reason, evidence] = await Promise.all([
    event.reason === null ? null : readableText(db, event.reason, eventContext("reason", event.id)),
    readableJson(db, event.evidence, eventContext("evidence", event.id)),
  ]);
  return { ...event, reason, evidence } as ExecutionEvent;
}

/**
 * An event's evidence where the engine looks for its own marks (a guard's
 * freeze, a review's release). Evidence that no longer opens holds no mark:
 * the guard is not shown and an attempt counts as not released, the safe
 * reading, so a shredded value never fails the review page.
 */
async function eventEvidence(
  db: Db | Tx,
  event: Pick<ExecutionEvent, "id" | "evidence">,
): Promise<Record<string, unknown> | null> {
  const evidence = await readableJson(db, event.evidence, eventContext("evidence", event.id));
  return evidence !== null && typeof evidence === "object" ? (evidence as Record<string, unknown>) : null;
}

/** A row as a view; the row must be opened (every row this module returns is). */
export function toExecutionView(row: Execution): ExecutionView {
  return {
    id: row.id,
    taskId: row.taskId,
    toolCallId: row.toolCallId,
    attempt: row.attempt,
    attemptId: row.attemptId,
    idempotencyKey: row.idempotencyKey,
    tool: row.tool,
    toolVersion: row.toolVersion,
    irreversible: row.irreversible,
    request: row.request as Record<string, unknown>,
    status: row.status,
    version: row.version,
    result: row.result,
    evidence: row.evidence,
    error: row.error,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    sentAt: row.sentAt,
    settledAt: row.settledAt,
    instructionId: row.instructionId,
    compensatesId: row.compensatesId,
    retry: retryAdviceOf(row),
  };
}

/**
 * The idempotency key of a logical call: the same for every attempt, so the
 * provider applies it at most once. Task ids are the caller's and unique per
 * tenant only, and tenants may share a provider account (the sandbox, a
 * platform's Stripe account): another tenant's key carries its tenant, so
 * two tenants' "order-1" refunds are two effects, never one answered twice.
 * The first tenant's keys keep the form they had before tenants, so calls
 * recorded then are still recognised at the provider. (The prefixes differ,
 * `vrt:` and `vrt.`, so no task id can make one tenant's key another's.)
 */
export function idempotencyKeyOf(tenantId: string, taskId: string, toolCallId: string): string {
  return tenantId === DEFAULT_TENANT_ID ? `vrt:${taskId}:${toolCallId}` : `vrt.${tenantId}:${taskId}:${toolCallId}`;
}

/**
 * What identifies a call's request, so a retry that changed it is refused
 * (idempotency_conflict): the tool, the request as validated, and for a
 * compensation the effect it undoes. An ordinary call's digest is the one
 * it had before compensations existed.
 */
export function intentDigestOf(tool: string, request: Record<string, unknown>, compensatesId?: string | null): string {
  return digestOf({ tool, request, ...(compensatesId ? { compensates: compensatesId } : {}) });
}

export interface NewIntent {
  taskId: string;
  toolCallId: string;
  tool: string;
  toolVersion: number | null;
  irreversible: boolean;
  request: Record<string, unknown>;
  instructionId: string | null;
  leaseToken: bigint | null;
  reserved: { minor: number; currency: string } | null;
  compensatesId: string | null;
  /** The first event's words. */
  reason: string;
  /** The first event's evidence (a review's release: `released_by_review`). */
  evidence?: unknown;
  /**
   * The attempt leaves as soon as the intent commits (recordIntent's `send`,
   * its lease and instruction checks already made in this transaction): the
   * row is written SENT, with both moves' events and audit entries, in the
   * same statement. One row version and one statement fewer than an
   * INTENT_RECORDED row moved to SENT; the same records.
   */
  sent?: { reason: string };
}

/**
 * A call's first attempt, INTENT_RECORDED, with its event and audit entry:
 * the one place an execution row is created. One statement: the row, its
 * event and the audit entry, the last two written only with the first.
 */
export async function insertIntent(tx: Tx, intent: NewIntent, actor: Actor, now = new Date()): Promise<Execution> {
  const started = await startIntentInsert(tx, intent, actor, now);
  await started.written;
  return started.row;
}

/**
 * insertIntent in two halves, like startExecutionMove: this answers once
 * the statement is on the wire, so the caller's next statement in the same
 * transaction (the checkpoint taken with an irreversible intent) follows it
 * in one round trip. `written` must be awaited before the transaction
 * commits; it fails as the insert does (a unique violation: a twin request).
 */
export async function startIntentInsert(
  tx: Tx,
  intent: NewIntent,
  actor: Actor,
  now = new Date(),
): Promise<{ row: Execution; written: Promise<void> }> {
  const id = newId("exec");
  const tenantId = await tenantOfConnection(tx);
  const row: Execution = {
    tenantId,
    id,
    taskId: intent.taskId,
    toolCallId: intent.toolCallId,
    attempt: 1,
    attemptId: `${id}.1`,
    idempotencyKey: idempotencyKeyOf(tenantId, intent.taskId, intent.toolCallId),
    tool: intent.tool,
    toolVersion: intent.toolVersion,
    irreversible: intent.irreversible,
    request: intent.request as Prisma.JsonValue,
    // Over the plaintext request, as before sealing: a retry's request is compared by it.
    requestDigest: intentDigestOf(intent.tool, intent.request, intent.compensatesId),
    status: "INTENT_RECORDED",
    version: 1,
    result: null,
    evidence: null,
    error: null,
    createdBy: actor.identity,
    createdAt: now,
    updatedAt: now,
    sentAt: null,
    settledAt: null,
    instructionId: intent.instructionId,
    leaseToken: intent.leaseToken,
    reservedMinor: intent.reserved?.minor ?? null,
    reservedCurrency: intent.reserved?.currency ?? null,
    compensatesId: intent.compensatesId,
    // The request is sealed: the global search finds the call by customer through this index (docs/search.md).
    customerIndex: await blindIndexOf(tx, tenantId, "customer_id", intent.request.customer_id),
  };
  const request = await sealJson(tx, executionContext("request", id), intent.request, tenantId);
  // Sent with itself: the row as the move to SENT leaves it (sendInTransaction's columns), its lease token the intent's.
  const stored: Execution = intent.sent ? { ...row, status: "SENT", version: 2, sentAt: now } : row;
  const created = Prisma.sql`
    INSERT INTO executions (id, task_id, tool_call_id, attempt, attempt_id, idempotency_key, tool, tool_version, irreversible,
                            request, request_digest, status, version, created_by, created_at, updated_at, sent_at, instruction_id,
                            lease_token, reserved_minor, reserved_currency, compensates_id, customer_index)
    VALUES (${row.id}, ${row.taskId}, ${row.toolCallId}, ${row.attempt}, ${row.attemptId}, ${row.idempotencyKey}, ${row.tool},
            ${row.toolVersion}::int, ${row.irreversible}, ${JSON.stringify(request)}::jsonb, ${row.requestDigest},
            ${stored.status}::"ExecutionStatus", ${stored.version}, ${row.createdBy}, ${now.toISOString()}::timestamptz,
            ${now.toISOString()}::timestamptz, ${stored.sentAt?.toISOString() ?? null}::timestamptz, ${row.instructionId},
            ${bigintParam(row.leaseToken)}::bigint,
            ${row.reservedMinor}::int, ${row.reservedCurrency}, ${row.compensatesId}, ${row.customerIndex})
    RETURNING 1`;
  const event = await eventSql(tx, row, null, intent.reason, intent.evidence, actor, "created");
  if (!intent.sent) {
    const written = directQuery(tx, Prisma.sql`WITH created AS (${created}), ${event.sql} ${event.audit} RETURNING 1`, {
      prepare: "insert_intent",
    });
    return { row, written: awaitedLater(written.then(() => undefined)) };
  }
  // The send's event reads the intent's audit entry (`recorded`), so the two
  // entries are linked into the execution's chain in this order: recorded, then sent.
  const sent = await eventSql(
    tx,
    stored,
    "INTENT_RECORDED",
    intent.sent.reason,
    undefined,
    actor,
    "recorded",
    "sent_event",
  );
  const written = directQuery(
    tx,
    Prisma.sql`WITH created AS (${created}), ${event.sql}, recorded AS (${event.audit} RETURNING 1), ${sent.sql} ${sent.audit} RETURNING 1`,
    { prepare: "insert_sent_intent" },
  );
  return { row: stored, written: awaitedLater(written.then(() => undefined)) };
}

/** A bigint as a statement's parameter: its decimal text, cast by the statement (node-postgres and Prisma alike). */
function bigintParam(value: bigint | null): string | null {
  return value === null ? null : value.toString();
}

/** The columns a move may change besides status, version and time, as the ledger's use cases set them. */
export interface ExecutionMoveData {
  attempt?: number;
  attemptId?: string;
  error?: string | null;
  sentAt?: Date | null;
  settledAt?: Date | null;
  instructionId?: string | null;
  leaseToken?: bigint | null;
  /** A JSON value, or Prisma's JSON-null marker (stored as JSON null) or DB-null marker (no value). */
  result?: unknown;
  evidence?: unknown;
}

/** Each settable field's column and SQL type. */
const moveColumns: Record<keyof ExecutionMoveData, [column: string, type: string]> = {
  attempt: ["attempt", "int"],
  attemptId: ["attempt_id", "text"],
  error: ["error", "text"],
  sentAt: ["sent_at", "timestamptz"],
  settledAt: ["settled_at", "timestamptz"],
  instructionId: ["instruction_id", "text"],
  leaseToken: ["lease_token", "bigint"],
  result: ["result", "jsonb"],
  evidence: ["evidence", "jsonb"],
};

/** A value as the parameter of its column's cast: JSON as its text (a sealed value is a JSON string; Prisma's JSON null is `null`, its DB null no value), a time as ISO text. */
function moveParam(value: unknown, type: string): unknown {
  if (value === null || value === Prisma.DbNull) return null;
  if (value === Prisma.JsonNull || value === Prisma.AnyNull) return "null";
  if (type === "jsonb") return JSON.stringify(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  return value;
}

/**
 * The row as a move leaves it (the statement's `RETURNING` must agree):
 * what its audit entry describes, known before the write, so the row, its
 * event and its entry go in one statement.
 */
function movedRow(existing: Execution, to: ExecutionStatus, data: ExecutionMoveData, updatedAt: Date): Execution {
  const plain = Object.fromEntries(
    Object.entries(data).map(([k, v]) => [
      k,
      v === Prisma.JsonNull || v === Prisma.DbNull || v === Prisma.AnyNull ? null : v,
    ]),
  );
  return { ...existing, ...plain, status: to, version: existing.version + 1, updatedAt } as Execution;
}

/**
 * A status move: a CAS on the execution's version, with its event and audit
 * entry, as ONE statement (the event and the entry are written only with
 * the update), so a ledger step pays one round trip per move.
 */
export async function moveExecution(
  tx: Tx,
  existing: Execution,
  to: ExecutionStatus,
  actor: Actor,
  options: { reason: string; evidence?: unknown; data?: ExecutionMoveData },
): Promise<Execution> {
  return (await startExecutionMove(tx, existing, to, actor, options)).done;
}

/** A move whose statement has been sent (startExecutionMove). */
export interface StartedExecutionMove {
  /** The row as the move leaves it, its values as given (not sealed): known before the answer. */
  expected: Execution;
  /** The row as written (opened), or the move's refusal: version_conflict when another write moved it first. */
  done: Promise<Execution>;
}

/**
 * moveExecution in two halves: this answers once the move's statement is
 * on the wire (pipeline mode, lib/db/client.ts), so the caller's next
 * statements in the same transaction follow it in order and share its round
 * trip (recordOutcome: the task's move after the execution's). `done` must
 * be awaited before the transaction commits.
 */
export async function startExecutionMove(
  tx: Tx,
  existing: Execution,
  to: ExecutionStatus,
  actor: Actor,
  options: { reason: string; evidence?: unknown; data?: ExecutionMoveData },
): Promise<StartedExecutionMove> {
  if (!canMoveExecution(existing.status, to)) throw illegalMove(existing, to);
  const data = options.data ? await sealedExecutionData(tx, existing.id, options.data) : {};
  const updatedAt = new Date();
  const sets = Object.entries(data)
    .filter(([, value]) => value !== undefined)
    .map(([field, value]) => {
      const [column, type] = moveColumns[field as keyof ExecutionMoveData];
      return Prisma.sql`${Prisma.raw(column)} = ${moveParam(value, type)}::${Prisma.raw(type)}`;
    });
  const expected = movedRow(existing, to, options.data ?? {}, updatedAt);
  const moved = Prisma.sql`
    UPDATE executions
       SET ${Prisma.join([...sets, Prisma.sql`status = ${to}::"ExecutionStatus", version = ${expected.version}, updated_at = ${updatedAt.toISOString()}::timestamptz`])}
     WHERE id = ${existing.id} AND version = ${existing.version}
    RETURNING ${executionColumns}`;
  const event = await eventSql(tx, expected, existing.status, options.reason, options.evidence, actor, "moved");
  const answer = directQuery<ExecutionRow>(
    tx,
    Prisma.sql`WITH moved AS (${moved}), ${event.sql}, audited AS (${event.audit} RETURNING 1) SELECT * FROM moved`,
    { prepare: "move_execution" },
  );
  const done = finishExecutionMove(tx, existing, to, answer);
  void awaitedLater(done);
  return { expected, done };
}

async function finishExecutionMove(
  tx: Tx,
  existing: Execution,
  to: ExecutionStatus,
  answer: Promise<ExecutionRow[]>,
): Promise<Execution> {
  const [updated] = await answer;
  if (!updated) {
    const latest = await tx.execution.findUnique({ where: { id: existing.id } });
    throw new AppError(
      "version_conflict",
      `Execution ${existing.id} changed meanwhile (now ${latest?.status}, version ${latest?.version}).`,
      {
        currentVersion: latest?.version,
        currentStatus: latest?.status,
      },
    );
  }
  const row = await openExecution(tx, executionOfRow(updated));
  if (outcomeStatuses.has(to)) countEffectOutcome(row.tool, to);
  return row;
}

/** The statuses an effect's outcome is counted at (verity_effect_outcomes_total): everything past SENT. */
const outcomeStatuses: ReadonlySet<ExecutionStatus> = new Set<ExecutionStatus>([
  "SUCCEEDED",
  "FAILED",
  "OUTCOME_UNKNOWN",
  "RECONCILED_SUCCEEDED",
  "RECONCILED_FAILED",
  "NEEDS_HUMAN",
  "CANCELLED",
]);

/**
 * An event of `row` and its audit entry as the parts of one statement:
 * `event AS (…)` for its WITH list (after `after`, the CTE that writes the
 * row, when there is one: the event is written only with it) and the entry,
 * written only with the event. After the execution row's write: this
 * transaction holds that row, so the execution stream's head adds no lock
 * order of its own.
 */
async function eventSql(
  tx: Tx,
  row: Execution,
  from: ExecutionStatus | null,
  reason: string,
  evidence: unknown,
  actor: Actor,
  after?: "created" | "moved" | "recorded",
  name: "event" | "sent_event" = "event",
): Promise<{ sql: Prisma.Sql; audit: Prisma.Sql }> {
  const id = newId("exev");
  // The reason may quote a person's words (a review's decision) or the
  // provider's message; the evidence is the provider's record. Both sealed,
  // and the audit entry quotes them sealed, as stored.
  const sealedReason = await sealText(tx, eventContext("reason", id), reason);
  const sealedEvidence =
    evidence === undefined ? undefined : await sealJson(tx, eventContext("evidence", id), evidence);
  const guard = after ? Prisma.sql`FROM ${Prisma.raw(after)}` : Prisma.empty;
  const sql = Prisma.sql`${Prisma.raw(name)} AS (
    INSERT INTO execution_events (id, execution_id, attempt_id, from_status, to_status, actor, reason, evidence, created_at)
    SELECT ${id}, ${row.id}, ${row.attemptId}, ${from}::"ExecutionStatus", ${row.status}::"ExecutionStatus", ${actor.identity},
           ${sealedReason}, ${sealedEvidence == null ? null : JSON.stringify(sealedEvidence)}::jsonb,
           ${new Date().toISOString()}::timestamptz ${guard}
    RETURNING 1)`;
  const audit = auditEntryInsertSql(executionAuditEntry(row, from, sealedReason, sealedEvidence, actor), {
    onlyIfRowsIn: name,
  });
  return { sql, audit };
}

export function staleAttempt(existing: Execution, attemptId: string): AppError {
  return new AppError(
    "version_conflict",
    `Attempt ${attemptId} is not the current attempt of execution ${existing.id} (now ${existing.attemptId}, ${existing.status}).`,
    {
      currentVersion: existing.version,
      currentStatus: existing.status,
    },
  );
}

export function illegalMove(existing: Execution, to: ExecutionStatus): AppError {
  return new AppError("invariant_violated", `Execution ${existing.id} is ${existing.status}; it cannot become ${to}.`, {
    violations: [{ invariant: "execution_status_machine", message: `${existing.status} → ${to} is not allowed.` }],
  });
}

/** The row, opened, for the engine (see openExecution). */
export async function getExecutionRowOrThrow(db: Db | Tx, executionId: string): Promise<Execution> {
  const [row] = await directQuery<ExecutionRow>(
    db,
    Prisma.sql`SELECT ${executionColumns} FROM executions WHERE id = ${executionId}`,
    { prepare: "execution_by_id" },
  );
  if (!row) throw new AppError("not_found", `Execution ${executionId} does not exist.`);
  return openExecution(db, executionOfRow(row));
}

/** For callers and pages: values that no longer open are shown as unreadable (readableExecution). */
export async function getExecution(db: Db, executionId: string): Promise<ExecutionView | null> {
  const row = await db.execution.findUnique({ where: { id: executionId } });
  return row ? toExecutionView(await readableExecution(db, row)) : null;
}

/** For callers and pages, like getExecution. */
export async function listExecutions(db: Db, taskId: string): Promise<ExecutionView[]> {
  const rows = await db.execution.findMany({ where: { taskId }, orderBy: { createdAt: "asc" } });
  return readableExecutionViews(db, rows);
}

/** For callers and pages: each event's reason and evidence opened (readable, like getExecution). */
export async function listExecutionEvents(db: Db, executionId: string): Promise<ExecutionEvent[]> {
  // An intent sent with itself writes its two events in one statement, usually in the same millisecond:
  // the creation (the one event without a from status) comes first.
  const events = await db.executionEvent.findMany({
    where: { executionId },
    orderBy: [{ createdAt: "asc" }, { fromStatus: { sort: "asc", nulls: "first" } }],
  });
  return Promise.all(events.map((event) => readableEvent(db, event)));
}

/**
 * The task's reservations that still count (lib/model/executions/budget-reservation.ts):
 * its executions holding one whose effect may still happen or has happened,
 * summed per currency by the database. A succeeded call's reservation counts
 * for good, so a busy task holds hundreds of them: one row per currency
 * comes back, not one per call (the rules only ever need the sums and
 * whether a foreign currency is among them).
 * `except` leaves out the execution being (re-)reserved; `sentOnly` keeps
 * only calls that have left (their effect may have happened or did).
 */
export async function liveReservationsOfTask(
  db: Db | Tx,
  taskId: string,
  options: { except?: string; sentOnly?: boolean } = {},
): Promise<Reservation[]> {
  const rows = await directQuery<{ currency: string; minor: string | number }>(
    db,
    Prisma.sql`
    SELECT reserved_currency AS currency, sum(reserved_minor)::bigint AS minor
      FROM executions
     WHERE task_id = ${taskId} AND reserved_minor IS NOT NULL AND reserved_currency IS NOT NULL
       AND status::text NOT IN (${Prisma.join([...reservationReleasedStatuses])})
       ${options.except ? Prisma.sql`AND id <> ${options.except}` : Prisma.empty}
       ${options.sentOnly ? Prisma.sql`AND sent_at IS NOT NULL` : Prisma.empty}
     GROUP BY reserved_currency
     ORDER BY reserved_currency`,
    { prepare: "live_reservations" },
  );
  return rows.map((r) => ({ currency: r.currency, minor: Number(r.minor) }));
}

/**
 * When people released the execution's current attempt to its agent from a
 * review (decide-review.ts): the moment they approved sending it, over the
 * instructions as they stood then. Null for an attempt nobody released.
 */
export async function releasedByReviewAt(db: Db | Tx, row: Execution): Promise<Date | null> {
  const events = await db.executionEvent.findMany({
    where: { executionId: row.id, attemptId: row.attemptId, toStatus: "INTENT_RECORDED" },
    orderBy: { createdAt: "desc" },
    select: { id: true, evidence: true, createdAt: true },
  });
  for (const e of events) if (typeof (await eventEvidence(db, e))?.released_by_review === "string") return e.createdAt;
  return null;
}

/** The instructions the guard named when it froze `executionId`, from the freezing event; null if it was not frozen by the guard. */
export async function guardOf(db: Db | Tx, executionId: string): Promise<InstructionGuardView | null> {
  const events = await db.executionEvent.findMany({
    where: { executionId, toStatus: "NEEDS_HUMAN" },
    orderBy: { createdAt: "desc" },
  });
  for (const ev of events) {
    const g = (
      (await eventEvidence(db, ev)) as {
        instruction_guard?: {
          kind: InstructionBlock["kind"];
          topic: string;
          relied_on_id: string | null;
          current_id: string | null;
        };
      } | null
    )?.instruction_guard;
    if (!g) continue;
    const found = await getInstructionsByIds(
      db,
      [g.relied_on_id, g.current_id].filter((x): x is string => !!x),
    );
    const byId = (id: string | null) => (id ? (found.find((i) => i.id === id) ?? null) : null);
    return { kind: g.kind, topic: g.topic, reliedOn: byId(g.relied_on_id), current: byId(g.current_id) };
  }
  return null;
}

/** An irreversible call whose failure would be safe to retry but has used up its tool's attempts: people decide, not another automatic attempt. */
export function isPastAttemptLimit(row: Execution): boolean {
  return row.irreversible && retryAdviceOf(row)?.code === "attempt_limit";
}

/**
 * Retention (lib/use-cases/retention/apply-task-retention.ts): a finished
 * task's executions and their events, in the caller's transaction, after
 * the rows that name an execution (its reviews, alerts and lookups).
 */
export async function deleteExecutionsOfTask(
  tx: Tx,
  taskId: string,
): Promise<{ execution_events: number; executions: number }> {
  const execution_events = (await tx.executionEvent.deleteMany({ where: { execution: { taskId } } })).count;
  const executions = (await tx.execution.deleteMany({ where: { taskId } })).count;
  return { execution_events, executions };
}

/**
 * Whose each named execution is, by id and by idempotency key: for the
 * consistency checker, which reads the provider's records (one account,
 * every tenant's effects) and compares each tenant with its own only. Runs
 * on the owner's connection, reading nothing but ids, keys and the tenant
 * column.
 */
export async function tenantsOfExecutionReferences(
  platformDb: Db,
  refs: { executionIds: readonly string[]; idempotencyKeys: readonly string[] },
): Promise<{ byId: Map<string, string>; byKey: Map<string, string> }> {
  const byId = new Map<string, string>();
  const byKey = new Map<string, string>();
  if (refs.executionIds.length === 0 && refs.idempotencyKeys.length === 0) return { byId, byKey };
  const rows = await platformDb.execution.findMany({
    where: { OR: [{ id: { in: [...refs.executionIds] } }, { idempotencyKey: { in: [...refs.idempotencyKeys] } }] },
    select: { id: true, idempotencyKey: true, tenantId: true },
  });
  for (const r of rows) {
    byId.set(r.id, r.tenantId);
    byKey.set(r.idempotencyKey, r.tenantId);
  }
  return { byId, byKey };
}

/**
 * The tenants whose executions these ids or idempotency keys are: how a
 * provider's webhook, which names the effect and no caller, finds whose it
 * is. Runs on the owner's connection (it must see every tenant), reading
 * nothing but the tenant column; the event is then applied on that tenant's
 * own connection.
 */
export async function tenantsOfExecutions(
  platformDb: Db,
  refs: { executionIds: readonly string[]; idempotencyKeys: readonly string[] },
): Promise<string[]> {
  if (refs.executionIds.length === 0 && refs.idempotencyKeys.length === 0) return [];
  const rows = await platformDb.execution.findMany({
    where: { OR: [{ id: { in: [...refs.executionIds] } }, { idempotencyKey: { in: [...refs.idempotencyKeys] } }] },
    select: { tenantId: true },
    distinct: ["tenantId"],
    orderBy: { tenantId: "asc" },
  });
  return rows.map((r) => r.tenantId);
}
