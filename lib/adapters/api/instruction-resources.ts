import { z } from "zod";
import type { InstructionGuardView } from "@/lib/stores/execution-store";
import {
  instructionDirectives,
  instructionSources,
  type InstructionLedger,
  type InstructionStanding,
  type InstructionView,
  type RecordInstructionResult,
} from "@/lib/stores/instructions";

/** The wire shapes of the instruction ledger (lib/stores/instructions.ts), snake_case like every resource. */
export const InstructionResourceSchema = z.object({
  id: z.string().meta({
    description:
      "The instruction_id: pass it as instruction_id on an intent that relies on it; a retry of the record with it replays.",
  }),
  task_id: z.string(),
  seq: z.int().min(1).meta({ description: "Gapless per task: the ledger's version after this entry." }),
  topic: z.string().meta({ description: 'What it governs, e.g. "refund" (payments.refund).' }),
  directive: z.enum(instructionDirectives),
  text: z.string(),
  source: z.enum(instructionSources),
  issued_by: z
    .string()
    .meta({ description: "Who recorded it: a person, or the agent relaying the requester's words or its own memory." }),
  authorized: z.boolean().meta({
    description:
      "Decided by who is authenticated, not by source: a person's instruction; the requester's words relayed by an agent when they forbid, or when they allow and no person has decided the topic; never an agent's memory.",
  }),
  unauthorized_because: z.string().optional().meta({
    description: "Why a relayed allow does not count: a person decided the topic, and only a person may allow it.",
  }),
  supersedes_id: z
    .string()
    .nullable()
    .meta({ description: "The instruction on the topic this one replaced when it was recorded." }),
  created_at: z.iso.datetime(),
});
export type InstructionResource = z.infer<typeof InstructionResourceSchema>;

export const InstructionStandingSchema = z.object({
  kind: z.enum(["current", "superseded", "unauthorized", "note"]),
  by_id: z.string().optional().meta({ description: "superseded: the instruction that replaced it." }),
  by_seq: z.int().optional(),
});

export const InstructionLedgerSchema = z.object({
  task_id: z.string(),
  seq: z
    .int()
    .min(0)
    .meta({ description: "The ledger's version (0 when empty); also the ETag. Send it as expected_seq or If-Match." }),
  items: z
    .array(InstructionResourceSchema.extend({ standing: InstructionStandingSchema }))
    .meta({ description: "Newest first." }),
  current: z
    .record(z.string(), InstructionResourceSchema)
    .meta({ description: "The current (latest authorized allow or forbid) instruction per topic." }),
});
export type InstructionLedgerResource = z.infer<typeof InstructionLedgerSchema>;

export const RecordInstructionResultSchema = z.object({
  instruction: InstructionResourceSchema,
  replayed: z
    .boolean()
    .meta({ description: "True when this instruction_id was already recorded: nothing was written now." }),
  in_flight_execution_ids: z.array(z.string()).meta({
    description:
      "Irreversible calls on the topic that had already been sent, outcome not settled: an instruction cannot unsend them; they settle by reconciliation, and any new attempt meets the instruction.",
  }),
});
export type RecordInstructionResultResource = z.infer<typeof RecordInstructionResultSchema>;

export const InstructionGuardSchema = z.object({
  kind: z.enum(["superseded", "unauthorized", "not_an_allow", "forbidden", "approval_requested"]).meta({
    description:
      "Why the call was frozen: the instruction it relied on (superseded, unauthorized, not_an_allow, forbidden), or approval_requested: the agent asked a person to approve it first.",
  }),
  topic: z.string(),
  relied_on: InstructionResourceSchema.nullable().meta({ description: "The instruction the call named (null: none)." }),
  current: InstructionResourceSchema.nullable().meta({
    description: "The topic's current authorized instruction when the call was judged (null: none).",
  }),
});
export type InstructionGuardResource = z.infer<typeof InstructionGuardSchema>;

export function instructionResource(i: InstructionView): InstructionResource {
  return {
    id: i.id,
    task_id: i.taskId,
    seq: i.seq,
    topic: i.topic,
    directive: i.directive,
    text: i.text,
    source: i.source,
    issued_by: i.issuedBy,
    authorized: i.authorized,
    supersedes_id: i.supersedesId,
    ...(typeof i.details.unauthorized_because === "string"
      ? { unauthorized_because: i.details.unauthorized_because }
      : {}),
    created_at: i.createdAt.toISOString(),
  };
}

function standingResource(s: InstructionStanding): z.infer<typeof InstructionStandingSchema> {
  return s.kind === "superseded" ? { kind: s.kind, by_id: s.byId, by_seq: s.bySeq } : { kind: s.kind };
}

export function instructionLedgerResource(ledger: InstructionLedger): InstructionLedgerResource {
  return {
    task_id: ledger.taskId,
    seq: ledger.seq,
    items: ledger.items.map((i) => ({ ...instructionResource(i), standing: standingResource(i.standing) })),
    current: Object.fromEntries(Object.entries(ledger.current).map(([topic, i]) => [topic, instructionResource(i)])),
  };
}

export function recordInstructionResultResource(r: RecordInstructionResult): RecordInstructionResultResource {
  return {
    instruction: instructionResource(r.instruction),
    replayed: r.replayed,
    in_flight_execution_ids: r.inFlightExecutionIds,
  };
}

export function instructionGuardResource(g: InstructionGuardView | null): InstructionGuardResource | null {
  if (!g) return null;
  return {
    kind: g.kind,
    topic: g.topic,
    relied_on: g.reliedOn ? instructionResource(g.reliedOn) : null,
    current: g.current ? instructionResource(g.current) : null,
  };
}
