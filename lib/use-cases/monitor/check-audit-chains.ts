import type { Db } from "@/lib/db/client";
import type { AuditBreak } from "@/lib/model/audit/audit-chain";
import { getAuditEntry, verifyAuditStreams } from "@/lib/stores/audit-log";
import { raiseViolation, type CheckReport, type PassContext } from "@/lib/use-cases/monitor/monitor-pass-context";

/**
 * Audit chains: a few streams per pass, verified by the same code as
 * `npm run audit:verify` and the console's badge (audit-log.ts
 * verifyAuditStreams), which re-walks a stream whose head moved while it was
 * read, so an append during the pass is not mistaken for a break.
 */
export async function checkAuditChains(
  ctx: PassContext,
  report: CheckReport,
  cursor: { afterStream: string | null },
): Promise<{ afterStream: string | null }> {
  const heads = await ctx.db.auditStream.findMany({
    where: cursor.afterStream ? { stream: { gt: cursor.afterStream } } : {},
    orderBy: { stream: "asc" },
    take: ctx.auditStreams,
    select: { stream: true },
  });
  report.examined += heads.length;
  const verification = await verifyAuditStreams(
    ctx.db,
    heads.map((h) => h.stream),
  );
  // One alert per broken stream: its first break.
  const firstPerStream = new Map<string, AuditBreak>();
  for (const brk of verification.breaks) if (!firstPerStream.has(brk.stream)) firstPerStream.set(brk.stream, brk);
  for (const brk of firstPerStream.values()) {
    await raiseViolation(ctx, report, {
      taskId: await taskOfBreak(ctx.db, brk),
      kind: "audit_chain_break",
      message: `The audit chain ${brk.stream} is broken at seq ${brk.seq}: ${brk.message}`,
      internal: { stream: brk.stream },
      external: { break: brk },
      fingerprint: `audit_chain_break:${brk.stream}:${brk.seq}:${brk.kind}`,
      finalOnceResolved: true,
    });
  }
  return { afterStream: heads.length < ctx.auditStreams ? null : (heads[heads.length - 1]?.stream ?? null) };
}

/** The task a break is about: a task stream names it; other aggregates' entries carry it ('' when none does). */
async function taskOfBreak(db: Db, brk: AuditBreak): Promise<string> {
  if (brk.stream.startsWith("task:")) return brk.stream.slice("task:".length);
  const entry = brk.entryId ? await getAuditEntry(db, brk.entryId) : null;
  if (entry?.taskId) return entry.taskId;
  const any = await db.auditEntry.findFirst({
    where: { stream: brk.stream, taskId: { not: null } },
    select: { taskId: true },
  });
  return any?.taskId ?? "";
}
