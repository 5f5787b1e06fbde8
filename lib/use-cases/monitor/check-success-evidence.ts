import { evidenceProblem } from "@/lib/model/monitor/success-evidence";
import { raiseViolation, type CheckReport, type PassContext } from "@/lib/use-cases/monitor/monitor-pass-context";
import { findExecutions } from "@/lib/stores/execution-store";

/** Tool success without matching evidence (spec Invariant 4). */
export async function checkSuccessEvidence(
  ctx: PassContext,
  report: CheckReport,
  cursor: { afterId: string | null },
): Promise<{ afterId: string | null }> {
  const rows = await findExecutions(ctx.db, {
    where: {
      status: { in: ["SUCCEEDED", "RECONCILED_SUCCEEDED"] },
      ...(cursor.afterId ? { id: { gt: cursor.afterId } } : {}),
    },
    orderBy: { id: "asc" },
    take: ctx.batch,
  });
  for (const row of rows) {
    report.examined++;
    const problem = evidenceProblem(row.evidence, row);
    if (!problem) continue;
    await raiseViolation(ctx, report, {
      taskId: row.taskId,
      executionId: row.id,
      kind: "success_without_evidence",
      message: `${row.tool} (${row.toolCallId}) is recorded ${row.status}, but its evidence ${problem}.`,
      internal: {
        execution_status: row.status,
        idempotency_key: row.idempotencyKey,
        execution_id: row.id,
        attempt: row.attempt,
      },
      external: { evidence: row.evidence ?? null, problem },
      fingerprint: `success_without_evidence:${row.id}:v${row.version}`,
      finalOnceResolved: true,
    });
  }
  return { afterId: rows.length < ctx.batch ? null : (rows[rows.length - 1]?.id ?? null) };
}
