"use server";

import { z } from "zod";
import type { FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { resolveDivergence } from "@/lib/use-cases/alerts/divergence";
import { reasonMaxLength, type ResolveFormState } from "@/lib/adapters/console/reviews/reviews-form";
import { consoleDb } from "@/lib/adapters/auth/session";

const ResolveFormSchema = z.object({
  alertId: z.string().min(1).max(256),
  taskId: z.string().min(1).max(256),
  expectedVersion: z.coerce.number().int().min(1),
  resolution: z
    .string()
    .trim()
    .min(1, "Say how it was resolved.")
    .max(reasonMaxLength, "Keep the resolution under 1,000 characters."),
});

/**
 * A person closes a divergence alert. Operators and admins only, checked here
 * whatever the page showed; the alert's version is the CAS target, so two
 * people resolving at once leave one resolution, not two.
 */
export const resolveDivergenceAction: FormAction<ResolveFormState> = sessionFormAction({
  name: "resolveDivergenceAction",
  permission: "tasks:transition",
  schema: ResolveFormSchema,
  errorState: (message) => ({ status: "error", message, details: [] }),
  async run({ alertId, expectedVersion, resolution }, { actor }) {
    await resolveDivergence(await consoleDb(), alertId, { expectedVersion, resolution }, actor);
    return {
      status: "done",
      message: "Resolved. Irreversible actions on this task may proceed once no other alert is open.",
    };
  },
  answer: (error) =>
    error.code === "version_conflict"
      ? {
          status: "conflict",
          message:
            "Someone else changed this alert first (it is probably resolved already) — here is the fresh state; nothing was overwritten.",
        }
      : undefined,
});
