"use server";

import { refresh } from "next/cache";
import { z } from "zod";
import { actorOf } from "@/lib/auth/permissions";
import { requireSessionPermission } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { recordInstruction, type InstructionView } from "@/lib/engine/instructions";
import { isAppError } from "@/lib/errors";
import { instructionTextMaxLength, type InstructionFormState } from "@/components/instructions/form-state";

const InstructionFormSchema = z.object({
  taskId: z.string().min(1).max(256),
  expectedSeq: z.coerce.number().int().min(0),
  instructionId: z.string().min(1).max(128),
  topic: z.string().trim().min(1, "Name the topic the instruction governs (e.g. refund)."),
  directive: z.enum(["allow", "forbid", "note"]),
  text: z.string().trim().min(1, "Write the instruction: its words are what people and agents will read.").max(instructionTextMaxLength),
  source: z.enum(["operator", "user"]).default("operator"),
});

/**
 * A person adds an instruction to a task's ledger. instructions:write is
 * checked here whatever the page showed; the ledger seq the page was read at
 * is the CAS target, so an instruction someone added meanwhile is shown, not
 * silently followed by this one. The form's instruction id makes a double
 * submit one instruction.
 */
export async function addInstructionAction(_previous: InstructionFormState, formData: FormData): Promise<InstructionFormState> {
  try {
    const principal = await requireSessionPermission("instructions:write", "action addInstructionAction");
    const form = InstructionFormSchema.safeParse(Object.fromEntries(formData));
    if (!form.success) return { status: "error", message: form.error.issues[0]?.message ?? "The form was incomplete.", details: [] };
    const { taskId, expectedSeq, instructionId, topic, directive, text, source } = form.data;
    const result = await recordInstruction(getDb(), taskId, { expected_seq: expectedSeq, instruction_id: instructionId, topic, directive, text, source }, actorOf(principal));
    refresh();
    const inFlight = result.inFlightExecutionIds.length
      ? ` ${result.inFlightExecutionIds.length} irreversible call${result.inFlightExecutionIds.length === 1 ? " had" : "s had"} already been sent: an instruction cannot unsend it; it settles with the provider.`
      : "";
    return { status: "done", message: `Recorded as #${result.instruction.seq}.${inFlight}` };
  } catch (error) {
    if (!isAppError(error)) throw error;
    switch (error.code) {
      case "version_conflict": {
        refresh();
        const latest = error.details.latestInstruction as InstructionView | null | undefined;
        return {
          status: "conflict",
          message: "Someone added an instruction meanwhile. Nothing was recorded: read theirs (below, and in the ledger) and add yours again if it still stands.",
          latest: latest ? { seq: latest.seq, topic: latest.topic, directive: latest.directive, text: latest.text, issuedBy: latest.issuedBy } : null,
        };
      }
      case "unauthenticated":
        return { status: "error", message: "Your session has ended. Sign in again; nothing was recorded.", details: [] };
      case "forbidden":
        return { status: "error", message: `Not allowed: ${error.message} Nothing was recorded.`, details: [] };
      default:
        return { status: "error", message: error.message, details: (error.details.errors ?? []).map((e) => `${e.field}: ${e.message}`) };
    }
  }
}
