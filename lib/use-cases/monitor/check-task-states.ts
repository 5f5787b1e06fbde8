import { inspectTaskRow } from "@/lib/model/monitor/task-row-findings";
import { openTaskRow } from "@/lib/stores/tasks/task-views";
import { raiseViolation, type CheckReport, type PassContext } from "@/lib/use-cases/monitor/monitor-pass-context";

/**
 * The monitor's walk over stored task rows, a batch a pass, each judged by
 * inspectTaskRow (lib/model/monitor/task-row-findings.ts).
 */
export async function checkTaskStates(
  ctx: PassContext,
  report: CheckReport,
  cursor: { afterId: string | null },
): Promise<{ afterId: string | null }> {
  const rows = await ctx.db.task.findMany({
    where: cursor.afterId ? { id: { gt: cursor.afterId } } : {},
    orderBy: { id: "asc" },
    take: ctx.batch,
  });
  for (const row of rows) {
    report.examined++;
    // Judged opened: a sealed subtask title is not a schema violation. A value whose key is gone reads as such.
    const findings = inspectTaskRow(await openTaskRow(ctx.db, row, "readable"));
    for (const f of findings) await raiseViolation(ctx, report, f);
  }
  // A short page is the end of the table: start again from the beginning next pass.
  return { afterId: rows.length < ctx.batch ? null : (rows[rows.length - 1]?.id ?? null) };
}
