import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { clientIdSchema, parseOrThrow } from "@/lib/core/validation";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { GateNameSchema } from "@/lib/model/tasks/task-state";
import { gateRulesOf, getWorkflowByDigest } from "@/lib/model/workflows";
import type { TransitionResult } from "@/lib/stores/tasks/task-views";
import { getTaskOrThrow, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";

export const ApproveGateInputSchema = z.strictObject({
  /** The version the person read: a task that moved meanwhile is a version_conflict, never approved blind. */
  expected_version: z.number().int().min(1),
  gate: GateNameSchema,
  reason: z.string().trim().min(1, "say why you approve: the timeline and the audit log keep it").max(1000),
  /** Minted with the form: a double submit replays the first approval. */
  transition_id: clientIdSchema.optional(),
});

function refused(invariant: string, message: string): AppError {
  return new AppError("forbidden", message, { violations: [{ invariant, message }] });
}

/**
 * A person approves one of a task's human gates (the workflow definition's
 * GateRule): signed in, holding one of the rule's roles, with a reason, and
 * under four eyes where the rule says so (not the person who set the gates
 * it names). Written as an in-place transition through the task CAS on the
 * version the person read, so the approval and its reason are in the
 * transition log and the task's audit chain. An agent never gets here: its
 * patch setting the gate is refused by the transition rules themselves
 * (humanGateRefusals), whichever adapter it came through.
 */
export async function approveGate(
  db: Db,
  taskId: string,
  raw: unknown,
  principal: Principal,
): Promise<TransitionResult> {
  const input = parseOrThrow(ApproveGateInputSchema, raw);
  const task = await getTaskOrThrow(db, taskId);
  const def = getWorkflowByDigest(task.workflow.digest);
  if (!def)
    throw new AppError("invariant_violated", `Task ${taskId}'s workflow definition is not known to this server.`);
  const rule = gateRulesOf(def)[input.gate];
  if (!rule) {
    throw new AppError(
      "validation_failed",
      `gate: ${input.gate} is not a person's approval in workflow ${def.name}; it is set as the work progresses.`,
      { errors: [{ field: "gate", message: `not a human gate of ${def.name}` }] },
    );
  }
  if (principal.kind !== "user") {
    throw refused(
      "gate_set_by_people",
      `Gate ${input.gate} of workflow ${def.name} is set by a person with the ${rule.roles.join(" or ")} role, not by an agent.`,
    );
  }
  if (!rule.roles.includes(principal.role)) {
    throw refused(
      "gate_set_by_people",
      `Gate ${input.gate} of workflow ${def.name} is set by a person with the ${rule.roles.join(" or ")} role; you are signed in as ${principal.role}.`,
    );
  }
  if (task.state.gates[input.gate]) {
    throw new AppError("invariant_violated", `Gate ${input.gate} is already approved.`, {
      violations: [{ invariant: "gate_not_yet_set", message: `Gate ${input.gate} is already approved.` }],
    });
  }
  if (rule.notSetBySameAs?.length) {
    // Read at the version the person saw; the CAS below on that version makes
    // a gate set meanwhile a conflict rather than a missed four-eyes check.
    const history = await listTransitions(db, taskId, { limit: 1000 });
    for (const other of rule.notSetBySameAs) {
      const setter = history.findLast((t) => t.patch.gates?.[other] === true)?.actor;
      if (setter === principal.identity) {
        throw refused(
          "four_eyes",
          `Four eyes: you approved ${other} on this task, so ${input.gate} needs another person (${rule.roles.join(" or ")}).`,
        );
      }
    }
  }
  return transitionTask(
    db,
    taskId,
    {
      expected_version: input.expected_version,
      patch: { gates: { [input.gate]: true } },
      reason: `${input.gate} approved by ${principal.displayName} (${principal.role}): ${input.reason}`,
      ...(input.transition_id ? { transition_id: input.transition_id } : {}),
    },
    actorOf(principal),
    { gateApproval: { gate: input.gate, role: principal.role } },
  );
}
