"use server";

import { refresh } from "next/cache";
import type { AuditActor } from "@/lib/engine/audit-chain";
import { requireSessionPermission } from "@/lib/auth/session";
import type { Principal } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db";
import { applyAuditRetention, placeLegalHold, releaseLegalHold } from "@/lib/engine/audit-retention";
import { isAppError } from "@/lib/errors";
import { ApplyRetentionFormSchema, PlaceHoldFormSchema, utcInstantFromLocalInput } from "@/lib/console/retention";
import type { RetentionFormState } from "@/lib/console/retention-form";

/**
 * The retention page's writes. Each checks audit:retention itself (a page
 * that showed the form proves nothing about who submits it) and goes through
 * lib/engine/audit-retention.ts, which records the audit entry in the same
 * transaction.
 */

function auditActorOf(principal: Principal): AuditActor {
  return { identity: principal.identity, kind: principal.kind === "agent" ? "agent" : "user" };
}

export async function placeHoldAction(_previous: RetentionFormState, formData: FormData): Promise<RetentionFormState> {
  try {
    const principal = await requireSessionPermission("audit:retention", "action placeHoldAction");
    const form = PlaceHoldFormSchema.safeParse(Object.fromEntries(formData));
    if (!form.success) return { status: "error", message: "The form was incomplete; reload the page and try again.", fields: {} };
    const { taskId, from, to, reason } = form.data;
    const hold = await placeLegalHold(getDb(), { task_id: taskId, from: utcInstantFromLocalInput(from), to: utcInstantFromLocalInput(to), reason }, auditActorOf(principal));
    refresh();
    return { status: "done", message: `Legal hold ${hold.id} placed. Retention will not delete what it covers until it is released.` };
  } catch (error) {
    return answerFor(error);
  }
}

export async function releaseHoldAction(_previous: RetentionFormState, formData: FormData): Promise<RetentionFormState> {
  try {
    const principal = await requireSessionPermission("audit:retention", "action releaseHoldAction");
    const holdId = String(formData.get("holdId") ?? "");
    const hold = await releaseLegalHold(getDb(), holdId, String(formData.get("reason") ?? ""), auditActorOf(principal));
    refresh();
    return { status: "done", message: `Legal hold ${hold.id} released.` };
  } catch (error) {
    if (isAppError(error) && error.code === "version_conflict") {
      refresh();
      return { status: "conflict", message: `${error.message} Nothing was changed.` };
    }
    return answerFor(error);
  }
}

export async function applyRetentionAction(_previous: RetentionFormState, formData: FormData): Promise<RetentionFormState> {
  try {
    const principal = await requireSessionPermission("audit:retention", "action applyRetentionAction");
    const form = ApplyRetentionFormSchema.safeParse(Object.fromEntries(formData));
    if (!form.success) {
      const fields: Record<string, string> = {};
      for (const issue of form.error.issues) {
        const field = String(issue.path[0] ?? "");
        fields[field] ??= field === "confirm" ? "Tick the box to confirm that old entries are deleted." : "A whole number of days, at least 1.";
      }
      return { status: "error", message: "Nothing was deleted: check the fields below.", fields };
    }
    const result = await applyAuditRetention(getDb(), { olderThanDays: form.data.days }, auditActorOf(principal));
    refresh();
    const deleted = result.cuts.reduce((n, c) => n + c.deleted, 0);
    const held = result.heldStreams.length ? ` ${result.heldStreams.length} stream(s) kept older entries under a legal hold.` : "";
    return {
      status: "done",
      message:
        result.entry === null
          ? `Nothing was older than ${form.data.days} days (before ${result.cutoff.toISOString()}) outside a legal hold: nothing deleted, nothing recorded.${held}`
          : `Deleted ${deleted} entries older than ${form.data.days} days from ${result.cuts.length} stream(s); each stream now starts at an anchor.${held}`,
    };
  } catch (error) {
    return answerFor(error);
  }
}

function answerFor(error: unknown): RetentionFormState {
  if (!isAppError(error)) throw error;
  switch (error.code) {
    case "unauthenticated":
      return { status: "error", message: "Your session has ended. Sign in again; nothing was changed.", fields: {} };
    case "forbidden":
      return { status: "error", message: `Not allowed: ${error.message} Nothing was changed.`, fields: {} };
    case "validation_failed": {
      const fields: Record<string, string> = {};
      for (const e of error.details.errors ?? []) fields[e.field] = e.message;
      return { status: "error", message: `Nothing was changed: ${error.message}`, fields };
    }
    default:
      return { status: "error", message: error.message, fields: {} };
  }
}
