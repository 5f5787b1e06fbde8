import type { AlertKind } from "@/lib/model/alerts/alert-kinds";
import { staleRestoreRefusals } from "@/lib/model/monitor/stale-restore-refusals";
import { raiseViolation, type CheckReport, type PassContext } from "@/lib/use-cases/monitor/monitor-pass-context";
import { readCommittedForward, type CommitCursor } from "@/lib/use-cases/monitor/read-committed-forward";

/**
 * Refused checkpoint restores (checkpoint_restores, written by
 * checkpoints.ts), read forward once each: a stale restore attempt
 * (staleRestoreRefusals) or a corrupt checkpoint is an alert.
 */
export async function checkCheckpointRestores(
  ctx: PassContext,
  report: CheckReport,
  cursor: CommitCursor,
): Promise<CommitCursor> {
  const { rows: keys, next } = await readCommittedForward(ctx, "checkpoint_restores", "created_at", cursor);
  const found = await ctx.db.checkpointRestore.findMany({ where: { id: { in: keys.map((r) => r.id) } } });
  const byId = new Map(found.map((r) => [r.id, r]));
  const rows = keys.map(({ id }) => byId.get(id)!);
  for (const row of rows) {
    report.examined++;
    if (row.outcome !== "refused" || !row.refusal) continue;
    const plan = row.plan as {
      refusal?: { message?: string };
      current?: { version?: number; status?: string };
      checkpoint?: { stateVersion?: number; status?: string };
    };
    const internal = {
      restore_id: row.id,
      checkpoint_id: row.checkpointId,
      checkpoint: plan.checkpoint ?? null,
      actor: row.actor,
      reason: row.reason,
      rewind: row.rewind,
    };
    const external = {
      refusal: row.refusal,
      message: plan.refusal?.message ?? null,
      task_at: plan.current ?? null,
      from_version: row.fromVersion,
    };
    let kind: AlertKind | null = null;
    if (staleRestoreRefusals.has(row.refusal)) kind = "stale_restore_attempt";
    else if (row.refusal === "corrupt") kind = "corrupt_checkpoint";
    if (!kind) continue;
    await raiseViolation(ctx, report, {
      taskId: row.taskId,
      kind,
      message:
        kind === "corrupt_checkpoint"
          ? `Checkpoint ${row.checkpointId} of task ${row.taskId} does not verify: ${plan.refusal?.message ?? "refused as corrupt"}`
          : `${row.actor} tried to restore checkpoint ${row.checkpointId} (version ${plan.checkpoint?.stateVersion ?? "?"}) over task ${row.taskId} at version ${plan.current?.version ?? row.fromVersion} (${plan.current?.status ?? "?"}); refused as ${row.refusal}: ${plan.refusal?.message ?? ""}`,
      internal,
      external,
      fingerprint:
        kind === "corrupt_checkpoint"
          ? `corrupt_checkpoint:${row.checkpointId}`
          : `stale_restore_attempt:${row.taskId}:${row.checkpointId}:${row.refusal}`,
    });
  }
  return next;
}
