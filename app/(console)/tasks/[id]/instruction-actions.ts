"use server";

import { z } from "zod";
import type { FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { recordInstruction, type InstructionView } from "@/lib/stores/instructions";
import { instructionTextMaxLength, type InstructionFormState } from "@/components/instructions/form-state";
import { consoleDb } from "@/lib/adapters/auth/session";

const InstructionFormSchema = z.object({
  taskId: z.string().min(1).max(256),
  expectedSeq: z.coerce.number().int().min(0),
  instructionId: z.string().min(1).max(128),
  topic: z.string().trim().min(1, "Name the topic the instruction governs (e.g. refund)."),
  directive: z.enum(["allow", "forbid", "note"]),
  text: z
    .string()
    .trim()
    .min(1, "Write the instruction: its words are what people and agents will read.")
    .max(instructionTextMaxLength),
  source: z.enum(["operator", "user"]).default("operator"),
});

/**
 * A person adds an instruction to a task's ledger. instructions:write is
 * checked here whatever the page showed; the ledger seq the page was read at
 * is the CAS target, so an instruction someone added meanwhile is shown, not
 * silently followed by this one. The form's instruction id makes a double
 * submit one instruction.
 */
export const addInstructionAction: FormAction<InstructionFormState> = sessionFormAction({
  name: "addInstructionAction",
  permission: "instructions:write",
  schema: InstructionFormSchema,
  nothingWas: "recorded",
  // The engine's field errors, one per line, beside its message.
  errorState: (message, error) => ({
    status: "error",
    message,
    details: (error?.details.errors ?? []).map((e) => `${e.field}: ${e.message}`),
  }),
  async run({ taskId, expectedSeq, instructionId, topic, directive, text, source }, { actor }) {
    const result = await recordInstruction(
      await consoleDb(),
      taskId,
      { expected_seq: expectedSeq, instruction_id: instructionId, topic, directive, text, source },
      actor,
    );
    const inFlight = result.inFlightExecutionIds.length
      ? ` ${result.inFlightExecutionIds.length} irreversible call${result.inFlightExecutionIds.length === 1 ? " had" : "s had"} already been sent: an instruction cannot unsend it; it settles with the provider.`
      : "";
    return { status: "done", message: `Recorded as #${result.instruction.seq}.${inFlight}` };
  },
  answer(error) {
    if (error.code !== "version_conflict") return undefined;
    const latest = error.details.latestInstruction as InstructionView | null | undefined;
    return {
      status: "conflict",
      message:
        "Someone added an instruction meanwhile. Nothing was recorded: read theirs (below, and in the ledger) and add yours again if it still stands.",
      latest: latest
        ? {
            seq: latest.seq,
            topic: latest.topic,
            directive: latest.directive,
            text: latest.text,
            issuedBy: latest.issuedBy,
          }
        : null,
    };
  },
});
