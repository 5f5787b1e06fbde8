"use server";

import { z } from "zod";
import { formIncompleteMessage, type FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { gateNames } from "@/lib/model/tasks/task-state";
import { approveGate } from "@/lib/use-cases/tasks/approve-gate";
import type { GateApprovalFormState } from "@/components/gates/gate-approval-state";
import { consoleDb } from "@/lib/adapters/auth/session";

const GateApprovalFormSchema = z.object({
  taskId: z.string().min(1).max(256),
  gate: z.enum(gateNames),
  expectedVersion: z.coerce.number().int().min(1),
  transitionId: z.string().min(1).max(128),
  reason: z
    .string()
    .trim()
    .min(1, "Say why you approve: the timeline and the audit log keep it.")
    .max(1000, "Keep the reason under 1,000 characters."),
});

/**
 * A person approves a human gate. Who may is the workflow definition's
 * GateRule, checked by approveGate on the server (role, four eyes) whatever
 * the page showed; tasks:read only lets the form be called at all. The
 * version the page was read at is the CAS target and the form's transition
 * id makes a double submit one approval.
 */
export const approveGateAction: FormAction<GateApprovalFormState> = sessionFormAction({
  name: "approveGateAction",
  permission: "tasks:read",
  schema: GateApprovalFormSchema,
  nothingWas: "approved",
  errorState: (message, error) => ({
    status: "error",
    message,
    details: (error?.details.violations ?? []).map((v) => v.message).filter((m) => m !== message),
  }),
  invalid: (issues) => ({ status: "error", message: formIncompleteMessage, details: issues.map((i) => i.message) }),
  async run({ taskId, gate, expectedVersion, transitionId, reason }, { principal }) {
    const result = await approveGate(
      await consoleDb(),
      taskId,
      { expected_version: expectedVersion, gate, reason, transition_id: transitionId },
      principal,
    );
    return {
      status: "done",
      message: result.replayed
        ? `Already approved: this form was submitted before (version ${result.task.version}).`
        : `Approved ${gate} (version ${result.task.version}).`,
    };
  },
  answer(error) {
    if (error.code !== "version_conflict") return undefined;
    return {
      status: "conflict",
      message:
        "The task changed after this page was read: nothing was approved. Read it as it is now and approve again if it still stands.",
    };
  },
});
