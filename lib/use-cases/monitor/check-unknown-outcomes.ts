import { formatDuration } from "@/lib/core/format-duration";
import { raiseViolation, type CheckReport, type PassContext } from "@/lib/use-cases/monitor/monitor-pass-context";
import { toolDefinitionOf } from "@/lib/stores/tool-registry";

/** Unknown outcomes older than the provider's idempotency window. */
export async function checkUnknownOutcomes(ctx: PassContext, report: CheckReport): Promise<void> {
  const tools = await ctx.db.execution.findMany({
    where: { status: { in: ["OUTCOME_UNKNOWN", "SENT"] } },
    distinct: ["tenantId", "tool", "toolVersion"],
    select: { tenantId: true, tool: true, toolVersion: true },
  });
  for (const { tenantId, tool, toolVersion } of tools) {
    // Each version's own window: read, so the pure window rule knows the version.
    await toolDefinitionOf(ctx.db, tool, toolVersion);
    const windowMs = ctx.windowOf(tenantId, tool, toolVersion);
    const cutoff = new Date(ctx.now.getTime() - windowMs);
    // Past the window the set is small and stays small (each is alerted once); oldest first, a batch a pass.
    const rows = await ctx.db.execution.findMany({
      where: {
        tenantId,
        tool,
        toolVersion,
        status: { in: ["OUTCOME_UNKNOWN", "SENT"] },
        OR: [{ sentAt: { lt: cutoff } }, { sentAt: null, createdAt: { lt: cutoff } }],
      },
      orderBy: [{ sentAt: "asc" }, { id: "asc" }],
      take: ctx.batch,
    });
    for (const row of rows) {
      report.examined++;
      const since = row.sentAt ?? row.createdAt;
      const ageMs = ctx.now.getTime() - since.getTime();
      await raiseViolation(ctx, report, {
        taskId: row.taskId,
        executionId: row.id,
        kind: "unknown_outcome_expired",
        message: `${row.tool} (${row.toolCallId}) has been ${row.status === "SENT" ? "SENT without an outcome" : "OUTCOME_UNKNOWN"} for ${formatDuration(ageMs)}, past the provider's ${formatDuration(windowMs)} idempotency window: a retry under key ${row.idempotencyKey} may no longer be recognised. Reconcile it; do not retry it.`,
        internal: {
          execution_status: row.status,
          sent_at: row.sentAt,
          idempotency_key: row.idempotencyKey,
          attempt: row.attempt,
        },
        external: {
          idempotency_window_ms: windowMs,
          age_ms: ageMs,
          window_ended_at: new Date(since.getTime() + windowMs),
        },
        fingerprint: `unknown_outcome_expired:${row.id}:${row.attemptId}`,
      });
    }
  }
}
