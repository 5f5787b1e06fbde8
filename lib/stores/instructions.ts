import { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import { directQuery, inOrder, type Db, type Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { Prisma, type TaskInstruction } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { instructionRecordedAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { toolDefinitionOf } from "@/lib/stores/tool-registry";
import { openText, sealText } from "@/lib/stores/field-encryption";

/**
 * The owner of `task_instructions`: each task's versioned, append-only
 * ledger of instructions (the spec's stale-memory case: old memory "user
 * approved refund", latest instruction "do not issue refund").
 *
 * Versioning. `seq` is gapless per task. A writer names the seq it saw last
 * (`expected_seq`); anything else is a version_conflict naming the current
 * seq, so two people adding an instruction at once never silently overwrite
 * each other's meaning: the second reads the first and decides again.
 * A client `instruction_id` makes a write idempotent: its retry returns the
 * first result and writes nothing.
 *
 * Authorization comes from who is authenticated, never from the claimed
 * `source`; decided here and nowhere else:
 *   - a person (operator or admin, console or API) speaks for the business:
 *     source `operator` (their own decision) or `user` (the requester's
 *     words, taken down by them); authorized;
 *   - an agent may relay the task requester's own words (source `user`,
 *     recorded with the agent as issuer and details.relayed_by). A relayed
 *     `forbid` only tightens, so it is authorized at once. A relayed `allow`
 *     is authorized only while no person has given a directive on its topic:
 *     it never supersedes a person's instruction, so it can never authorize
 *     an irreversible call a person forbade (the spec's stale-memory case
 *     the wrong way round: an agent "relaying" approval over an operator's
 *     forbid). Refused, it is still recorded, unauthorized, with
 *     details.unauthorized_because;
 *   - an agent's memory or summary (source `agent_memory`) is recorded, so
 *     people can see what the agent believes, but is never authorized and
 *     never supersedes anything;
 *   - `system`: Verity itself.
 *
 * Supersession. Only directives decide: the latest authorized `allow` or
 * `forbid` on a topic is its current instruction and supersedes the one
 * before it (`supersedes_id`), and through it every older one. A `note` is
 * context for people: it neither supersedes nor is ever current.
 *
 * Instruction writes take the task row FOR UPDATE; the execution guard
 * (lib/use-cases/executions/record-intent.ts and mark-sent.ts) reads the
 * ledger under FOR KEY SHARE of the same row, so an irreversible call is
 * judged either before or after an instruction, never halfway. FOR KEY
 * SHARE does not wait for task CAS updates, only for instruction writers.
 */

export const instructionDirectives = ["allow", "forbid", "note"] as const;
export type InstructionDirective = (typeof instructionDirectives)[number];
export const instructionSources = ["user", "operator", "agent_memory", "system"] as const;
export type InstructionSource = (typeof instructionSources)[number];

const clientId = clientIdSchema;
export const InstructionTopicSchema = z
  .string()
  .regex(
    /^[a-z][a-z0-9_.-]{0,63}$/,
    "must be 1-64 lower-case letters, digits, _ . -, starting with a letter (e.g. refund)",
  );

export const RecordInstructionInputSchema = z.strictObject({
  /** The ledger seq the writer saw last (0 for an empty ledger). */
  expected_seq: z.number().int().min(0),
  /** Chosen by the client: a retry with it returns the first result. */
  instruction_id: clientId.optional(),
  topic: InstructionTopicSchema,
  directive: z.enum(instructionDirectives),
  text: z.string().trim().min(1, "the instruction's words are required").max(2000),
  /** Defaults: `operator` for a person, `agent_memory` for an agent (unauthorized unless it says `user`). */
  source: z.enum(instructionSources).optional(),
});

export interface InstructionView {
  id: string;
  taskId: string;
  seq: number;
  topic: string;
  directive: InstructionDirective;
  text: string;
  source: InstructionSource;
  issuedBy: string;
  authorized: boolean;
  supersedesId: string | null;
  details: Record<string, unknown>;
  createdAt: Date;
}

export type InstructionStanding =
  /** The latest authorized directive on its topic. */
  | { kind: "current" }
  | { kind: "superseded"; byId: string; bySeq: number }
  /** Agent memory: shown, never acted upon. */
  | { kind: "unauthorized" }
  /** Context for people; decides nothing. */
  | { kind: "note" };

export interface LedgerEntry extends InstructionView {
  standing: InstructionStanding;
}

export interface InstructionLedger {
  taskId: string;
  /** The ledger's version: the seq of its last entry, 0 when empty. Send it as expected_seq. */
  seq: number;
  /** Newest first. */
  items: LedgerEntry[];
  /** The current instruction per topic. */
  current: Record<string, InstructionView>;
}

export interface RecordInstructionResult {
  instruction: InstructionView;
  /** True when this instruction_id was already recorded: nothing was written now. */
  replayed: boolean;
  /**
   * Irreversible calls on the topic that already left (SENT, outcome unknown,
   * or frozen after leaving). An instruction cannot unsend them: they keep
   * their course through reconciliation; any new attempt meets the guard.
   */
  inFlightExecutionIds: string[];
}

/** Where an instruction's words are sealed: the context of their envelope. */
function textContext(instructionId: string): string {
  return `task_instructions.text:${instructionId}`;
}

/** The row as a view, its words opened. */
async function openInstruction(db: Db | Tx, row: TaskInstruction): Promise<InstructionView> {
  return { ...viewOfRow(row), text: await openText(db, row.text, textContext(row.id)) };
}

async function openInstructions(db: Db | Tx, rows: readonly TaskInstruction[]): Promise<InstructionView[]> {
  return Promise.all(rows.map((row) => openInstruction(db, row)));
}

/** The row as a view with its words as stored (sealed, when encryption at rest is on). */
function viewOfRow(row: TaskInstruction): InstructionView {
  return {
    id: row.id,
    taskId: row.taskId,
    seq: row.seq,
    topic: row.topic,
    directive: row.directive as InstructionDirective,
    text: row.text,
    source: row.source as InstructionSource,
    issuedBy: row.issuedBy,
    authorized: row.authorized,
    supersedesId: row.supersedesId,
    details: (row.details ?? {}) as Record<string, unknown>,
    createdAt: row.createdAt,
  };
}

/**
 * Who may record what, and whether it counts before the ledger is read.
 * Throws for a source the actor cannot speak for (an agent claiming to be an
 * operator). A relayed allow's final word is `relayedAllowRefusal`'s, under
 * the ledger's lock.
 */
export function authorizationOf(
  actor: Actor,
  requested: InstructionSource | undefined,
): { source: InstructionSource; authorized: boolean } {
  switch (actor.kind) {
    case "user": {
      const source = requested ?? "operator";
      if (source !== "operator" && source !== "user") {
        throw new AppError(
          "validation_failed",
          `source: a person records their own instruction (operator) or the requester's words (user), not ${source}.`,
          {
            errors: [{ field: "source", message: "must be operator or user for a person" }],
          },
        );
      }
      return { source, authorized: true };
    }
    case "agent": {
      const source = requested ?? "agent_memory";
      if (source === "user") return { source, authorized: true };
      if (source === "agent_memory") return { source, authorized: false };
      throw new AppError(
        "forbidden",
        `An agent cannot record a ${source} instruction: it may relay the requester's words (user) or its own memory (agent_memory).`,
      );
    }
    case "system":
      return { source: requested ?? "system", authorized: true };
  }
}

type Authority = Pick<InstructionView, "authorized" | "directive" | "source" | "details">;

/** Recorded by an agent on the requester's behalf: the agent's word for what someone said. */
function isRelayed(i: Pick<InstructionView, "details">): boolean {
  return typeof i.details.relayed_by === "string";
}

/** A person's own authorized directive: what a relayed allow may never override. */
function isPersonsDirective(i: Authority): boolean {
  return i.authorized && i.directive !== "note" && i.source !== "system" && !isRelayed(i);
}

/**
 * Why a relayed allow does not count, given the topic's authorized directives
 * before it (oldest first), or null when it does: once a person has given a
 * directive on a topic, only a person can allow on it again.
 */
export function relayedAllowRefusal(earlierOnTopic: readonly InstructionView[]): string | null {
  const person = earlierOnTopic.findLast(isPersonsDirective);
  if (!person) return null;
  return `a person decided on ${person.topic} (${quote(person)}); an agent relaying the requester cannot override a person's instruction: a person must allow it.`;
}

/** Does this entry take part in its topic's chain of authority, given what came before it on the topic? */
function countsAsDirective(i: InstructionView, earlierOnTopic: readonly InstructionView[]): boolean {
  if (!i.authorized || i.directive === "note") return false;
  // Rows written before relayed allows were refused are judged by the same rule on read.
  if (isRelayed(i) && i.directive === "allow") return relayedAllowRefusal(earlierOnTopic) === null;
  return true;
}

/** Standings of a ledger given oldest first: each topic's authorized directives form one chain, its last one current. */
export function standingsOf(ledger: readonly InstructionView[]): Map<string, InstructionStanding> {
  const standings = new Map<string, InstructionStanding>();
  const latestByTopic = new Map<string, InstructionView>();
  const chainByTopic = new Map<string, InstructionView[]>();
  for (const i of ledger) {
    if (i.authorized && i.directive === "note") {
      standings.set(i.id, { kind: "note" });
      continue;
    }
    const chain = chainByTopic.get(i.topic) ?? [];
    if (!countsAsDirective(i, chain)) {
      standings.set(i.id, { kind: "unauthorized" });
      continue;
    }
    const previous = latestByTopic.get(i.topic);
    if (previous) standings.set(previous.id, { kind: "superseded", byId: i.id, bySeq: i.seq });
    standings.set(i.id, { kind: "current" });
    latestByTopic.set(i.topic, i);
    chainByTopic.set(i.topic, [...chain, i]);
  }
  return standings;
}

export async function recordInstruction(
  db: Db,
  taskId: string,
  raw: unknown,
  actor: Actor,
): Promise<RecordInstructionResult> {
  const input = parseOrThrow(RecordInstructionInputSchema, raw);
  const { source, authorized: authorizedBySource } = authorizationOf(actor, input.source);
  const relayed = actor.kind === "agent" && source === "user";
  const requestDigest = digestOf({ topic: input.topic, directive: input.directive, text: input.text, source });
  // A retry carries the seq its first try saw, now stale: recognise it before the CAS.
  if (input.instruction_id) {
    const replay = await replayOf(db, taskId, input.instruction_id, requestDigest);
    if (replay) return replay;
  }
  try {
    return await db.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<Array<{ id: string }>>`SELECT id FROM tasks WHERE id = ${taskId} FOR UPDATE`;
      if (locked.length === 0) throw new AppError("not_found", `Task ${taskId} does not exist.`);
      const last = await tx.taskInstruction.findFirst({ where: { taskId }, orderBy: { seq: "desc" } });
      const currentSeq = last?.seq ?? 0;
      if (currentSeq !== input.expected_seq)
        throw await ledgerConflict(tx, taskId, input.expected_seq, currentSeq, last);
      // Read under the task row's lock: a person's forbid committed a moment
      // ago is seen here, so a relayed allow can never slip past it.
      const chain = authorizedBySource && input.directive !== "note" ? await topicChain(tx, taskId, input.topic) : [];
      const unauthorizedBecause = relayed && input.directive === "allow" ? relayedAllowRefusal(chain) : null;
      const authorized = authorizedBySource && unauthorizedBecause === null;
      const replaced = authorized ? (chain.at(-1) ?? null) : null;
      const inFlight = await inFlightOn(tx, taskId, input.topic);
      const id = input.instruction_id ?? newId("ins");
      const row = await tx.taskInstruction.create({
        data: {
          id,
          taskId,
          seq: currentSeq + 1,
          topic: input.topic,
          directive: input.directive,
          // Sealed at rest (docs/encryption.md); the audit entry quotes the sealed form.
          text: await sealText(tx, textContext(id), input.text),
          source,
          issuedBy: actor.identity,
          authorized,
          supersedesId: replaced?.id ?? null,
          details: {
            request_digest: requestDigest,
            ...(relayed ? { relayed_by: actor.identity, relayed_for: "the task's requester" } : {}),
            ...(unauthorizedBecause ? { unauthorized_because: unauthorizedBecause } : {}),
            ...(inFlight.length > 0 ? { in_flight_execution_ids: inFlight } : {}),
          } as Prisma.InputJsonValue,
        },
      });
      await appendAuditEntry(tx, instructionRecordedAuditEntry(row, actor));
      return { instruction: { ...viewOfRow(row), text: input.text }, replayed: false, inFlightExecutionIds: inFlight };
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      // A twin of this very request won (same instruction_id): answer as its retry.
      if (input.instruction_id) {
        const replay = await replayOf(db, taskId, input.instruction_id, requestDigest);
        if (replay) return replay;
      }
      const last = await db.taskInstruction.findFirst({ where: { taskId }, orderBy: { seq: "desc" } });
      throw await ledgerConflict(db, taskId, input.expected_seq, last?.seq ?? 0, last);
    }
    throw error;
  }
}

async function replayOf(
  db: Db,
  taskId: string,
  instructionId: string,
  requestDigest: string,
): Promise<RecordInstructionResult | null> {
  const existing = await db.taskInstruction.findFirst({ where: { id: instructionId } });
  if (!existing) return null;
  const details = (existing.details ?? {}) as Record<string, unknown>;
  if (existing.taskId !== taskId || details.request_digest !== requestDigest) {
    throw new AppError(
      "idempotency_conflict",
      `Instruction ${instructionId} was recorded with different content${existing.taskId !== taskId ? " on another task" : ""}; use a new instruction_id for a new instruction.`,
    );
  }
  const inFlight = Array.isArray(details.in_flight_execution_ids) ? (details.in_flight_execution_ids as string[]) : [];
  return { instruction: await openInstruction(db, existing), replayed: true, inFlightExecutionIds: inFlight };
}

async function ledgerConflict(
  db: Db | Tx,
  taskId: string,
  expected: number,
  current: number,
  last: TaskInstruction | null,
): Promise<AppError> {
  const latest = last ? `: #${last.seq} (${last.directive} on ${last.topic}, by ${last.issuedBy})` : "";
  return new AppError(
    "version_conflict",
    `Expected instruction ledger seq ${expected}, but task ${taskId}'s ledger is at seq ${current}${latest}. Someone added an instruction meanwhile: read it and decide again.`,
    { currentVersion: current, currentSeq: current, latestInstruction: last ? await openInstruction(db, last) : null },
  );
}

/** Irreversible executions of tools governed by `topic` that have left and are not settled. */
async function inFlightOn(tx: Tx, taskId: string, topic: string): Promise<string[]> {
  const rows = await tx.execution.findMany({
    where: {
      taskId,
      irreversible: true,
      status: { in: ["SENT", "OUTCOME_UNKNOWN", "NEEDS_HUMAN"] },
      sentAt: { not: null },
    },
    select: { id: true, tool: true, toolVersion: true },
    orderBy: { createdAt: "asc" },
  });
  // The topic of the version each call was recorded under (built in or registered).
  const governed: string[] = [];
  for (const r of rows) if ((await toolDefinitionOf(tx, r.tool, r.toolVersion))?.topic === topic) governed.push(r.id);
  return governed;
}

/** A tool as the guard sees it: its name (for the words) and the topic that governs it. */
export interface GovernedTool {
  name: string;
  topic: string;
}

export async function getInstructionLedger(db: Db | Tx, taskId: string): Promise<InstructionLedger> {
  const rows = await db.taskInstruction.findMany({ where: { taskId }, orderBy: { seq: "asc" } });
  const views = await openInstructions(db, rows);
  const standings = standingsOf(views);
  const current: Record<string, InstructionView> = {};
  for (const v of views) if (standings.get(v.id)?.kind === "current") current[v.topic] = v;
  return {
    taskId,
    seq: views.at(-1)?.seq ?? 0,
    items: views.map((v) => ({ ...v, standing: standings.get(v.id) ?? { kind: "note" } })).reverse(),
    current,
  };
}

/** The topic's chain of authority, oldest first: the authorized directives that count (see standingsOf). */
async function topicChain(db: Db | Tx, taskId: string, topic: string): Promise<InstructionView[]> {
  // Raw and prepared (directQuery): the guard reads this before every irreversible intent and send (issue 16).
  const rows = await directQuery<TaskInstruction>(
    db,
    Prisma.sql`
    SELECT tenant_id AS "tenantId", id, task_id AS "taskId", seq, topic, directive, text, source, issued_by AS "issuedBy",
           authorized, supersedes_id AS "supersedesId", details, created_at AS "createdAt"
      FROM task_instructions
     WHERE task_id = ${taskId} AND topic = ${topic} AND authorized AND directive IN ('allow', 'forbid')
     ORDER BY seq`,
    { prepare: "topic_chain" },
  );
  const chain: InstructionView[] = [];
  for (const view of await openInstructions(db, rows)) if (countsAsDirective(view, chain)) chain.push(view);
  return chain;
}

/** The current instruction on `topic` (the last directive of its chain of authority), or null. */
export async function getCurrentInstruction(
  db: Db | Tx,
  taskId: string,
  topic: string,
): Promise<InstructionView | null> {
  return (await topicChain(db, taskId, topic)).at(-1) ?? null;
}

export async function getInstructionsByIds(db: Db | Tx, ids: readonly string[]): Promise<InstructionView[]> {
  if (ids.length === 0) return [];
  return openInstructions(db, await db.taskInstruction.findMany({ where: { id: { in: [...ids] } } }));
}

// ── The guard ────────────────────────────────────────────────────────────

/**
 * Why a call was frozen before it was sent: the instruction guard's four
 * reasons, or `approval_requested`: the agent's own framework asked for a
 * person's approval first (AI SDK tool approval, OpenAI Agents needsApproval,
 * a LangGraph interrupt), so the call waits in the review queue like any
 * frozen call.
 */
export type InstructionBlockKind = "superseded" | "unauthorized" | "not_an_allow" | "forbidden" | "approval_requested";

/** A call the agent asked a person to approve before it is sent, frozen with the agent's reason in words. */
export function approvalRequestedBlock(tool: GovernedTool, reason: string): InstructionBlock {
  return {
    kind: "approval_requested",
    topic: tool.topic,
    reliedOn: null,
    current: null,
    message: `${tool.name} was not sent: the agent asked for a person's approval first ("${reason}"). A person decides in the review queue.`,
  };
}

/** Why an irreversible call may not be sent on the instructions it has. */
export interface InstructionBlock {
  kind: InstructionBlockKind;
  topic: string;
  /** The instruction the call relies on (null: it named none). */
  reliedOn: InstructionView | null;
  /** The topic's current authorized instruction (null: none). */
  current: InstructionView | null;
  /** In words, for the agent and the review queue. */
  message: string;
}

function quote(i: InstructionView): string {
  const who = i.source === "agent_memory" ? `agent memory of ${i.issuedBy}` : `${i.source}, issued by ${i.issuedBy}`;
  // Never the words: this message is stored (a transition's and a review's
  // reason), and the words are confidential, sealed in the ledger alone.
  return `#${i.seq} ${i.directive} (${who})`;
}

/**
 * The guard of an irreversible call, pure: the call relies on `reliedOn`
 * (if it names one) and the topic's current authorized instruction is
 * `current`. Null: it may be sent.
 */
export function judgeInstructions(
  tool: GovernedTool,
  reliedOn: InstructionView | null,
  current: InstructionView | null,
): InstructionBlock | null {
  const topic = tool.topic;
  const block = (kind: InstructionBlockKind, why: string): InstructionBlock => ({
    kind,
    topic,
    reliedOn,
    current,
    message: `${tool.name} was not sent: ${why} A person decides in the review queue.`,
  });
  if (reliedOn) {
    if (!reliedOn.authorized) {
      return block(
        "unauthorized",
        `it relies on ${quote(reliedOn)}, which is not an authorized instruction${current ? `; the current instruction on ${topic} is ${quote(current)}` : ` and there is no authorized instruction on ${topic}`}.`,
      );
    }
    if (current && current.id !== reliedOn.id) {
      return block("superseded", `it relies on ${quote(reliedOn)}, superseded by ${quote(current)}.`);
    }
    if (reliedOn.directive !== "allow") {
      return block(
        reliedOn.directive === "forbid" ? "forbidden" : "not_an_allow",
        `it relies on ${quote(reliedOn)}, which does not allow it.`,
      );
    }
    return null;
  }
  if (current?.directive === "forbid")
    return block("forbidden", `the current instruction on ${topic} is ${quote(current)}.`);
  return null;
}

/**
 * Reads what the guard needs, in the caller's transaction, under FOR KEY
 * SHARE of the task row (see the module comment): an instruction committed
 * before this point is seen; one recorded after it waits for this
 * transaction, and then finds the call already decided.
 */
export async function checkInstructionGuard(
  tx: Tx,
  taskId: string,
  tool: GovernedTool,
  instructionId: string | null,
): Promise<InstructionBlock | null> {
  // Asked for together (inOrder): PostgreSQL runs the reads after the lock is granted, in one round trip.
  const topic = tool.topic;
  const [, current, reliedOn] = await inOrder([
    directQuery(tx, Prisma.sql`SELECT 1 FROM tasks WHERE id = ${taskId} FOR KEY SHARE`, { prepare: "task_key_share" }),
    getCurrentInstruction(tx, taskId, topic),
    instructionId
      ? tx.taskInstruction.findFirst({ where: { id: instructionId } }).then((r) => (r ? openInstruction(tx, r) : null))
      : Promise.resolve(null),
  ]);
  if (instructionId) assertReliable(taskId, tool, instructionId, reliedOn);
  return judgeInstructions(tool, reliedOn, current);
}

/** An instruction_id that is not this task's instruction on the tool's topic is a mistake of the caller: refused, nothing written. */
export function assertReliable(
  taskId: string,
  tool: GovernedTool,
  instructionId: string,
  reliedOn: InstructionView | null,
): void {
  if (!reliedOn || reliedOn.taskId !== taskId) {
    throw new AppError(
      "validation_failed",
      `instruction_id: ${instructionId} is not an instruction of task ${taskId}.`,
      {
        errors: [{ field: "instruction_id", message: `not an instruction of task ${taskId}` }],
      },
    );
  }
  const topic = tool.topic;
  if (reliedOn.topic !== topic) {
    throw new AppError(
      "validation_failed",
      `instruction_id: ${instructionId} is about ${reliedOn.topic}; ${tool.name} is governed by ${topic}.`,
      {
        errors: [{ field: "instruction_id", message: `is about ${reliedOn.topic}, not ${topic}` }],
      },
    );
  }
}

/** Retention (lib/use-cases/retention/apply-task-retention.ts): a finished task's instruction ledger, in the caller's transaction. */
export async function deleteInstructionsOfTask(tx: Tx, taskId: string): Promise<{ task_instructions: number }> {
  return { task_instructions: (await tx.taskInstruction.deleteMany({ where: { taskId } })).count };
}
