"use server";

import { refresh } from "next/cache";
import { z } from "zod";
import { actorOf } from "@/lib/auth/permissions";
import { requireSessionPermission } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { resolveDivergence } from "@/lib/engine/divergence";
import { isAppError } from "@/lib/errors";
import { reasonMaxLength, type ResolveFormState } from "@/lib/console/reviews-form";

const ResolveFormSchema = z.object({
  alertId: z.string().min(1).max(256),
  taskId: z.string().min(1).max(256),
  expectedVersion: z.coerce.number().int().min(1),
  resolution: z.string().trim().min(1, "Say how it was resolved.").max(reasonMaxLength, "Keep the resolution under 1,000 characters."),
});

/**
 * A person closes a divergence alert. Operators and admins only, checked here
 * whatever the page showed; the alert's version is the CAS target, so two
 * people resolving at once leave one resolution, not two.
 */
export async function resolveDivergenceAction(_previous: ResolveFormState, formData: FormData): Promise<ResolveFormState> {
  try {
    const principal = await requireSessionPermission("tasks:transition", "action resolveDivergenceAction");
    const form = ResolveFormSchema.safeParse(Object.fromEntries(formData));
    if (!form.success) return { status: "error", message: form.error.issues[0]?.message ?? "The form was incomplete.", details: [] };
    const { alertId, expectedVersion, resolution } = form.data;
    await resolveDivergence(getDb(), alertId, { expectedVersion, resolution }, actorOf(principal));
    refresh();
    return { status: "done", message: "Resolved. Irreversible actions on this task may proceed once no other alert is open." };
  } catch (error) {
    if (!isAppError(error)) throw error;
    switch (error.code) {
      case "version_conflict":
        refresh();
        return { status: "conflict", message: "Someone else changed this alert first (it is probably resolved already) — here is the fresh state; nothing was overwritten." };
      case "unauthenticated":
        return { status: "error", message: "Your session has ended. Sign in again; nothing was changed.", details: [] };
      case "forbidden":
        return { status: "error", message: `Not allowed: ${error.message} Nothing was changed.`, details: [] };
      default:
        return { status: "error", message: error.message, details: [] };
    }
  }
}
