import {
  consistencyChecks,
  type ConsistencyCheck,
  type ConsistencyReport,
} from "@/lib/use-cases/monitor/consistency-check";

/**
 * The checker's report for people (`npm run check:consistency` without
 * --json): the verdict first, one line per check, then every finding
 * grouped by check, then what is already with a person. Pure.
 */

const checkTitles: Record<ConsistencyCheck, string> = {
  transition_logs: "transition logs gapless, each row's previous version right, every change audited",
  audit_chains: "audit hash chains intact",
  task_states: "stored task states valid (schema, invariants, mandatory subtasks of completed tasks)",
  effects: "completed tasks' mandatory effects succeeded with evidence; no failed task with an effect",
  provider: "every effect at the provider is a succeeded execution's, once",
  deadlines: "nothing past its deadline without a person or an alert",
  failure_reasons: "every failed task says why, in words",
};

export function formatConsistencyReport(report: ConsistencyReport, options: { maxPerCheck?: number } = {}): string {
  const max = options.maxPerCheck ?? 20;
  const c = report.counts;
  const lines: string[] = [];
  const provider =
    c.providerRefunds === null
      ? "provider not compared"
      : `${c.providerRefunds} refunds and ${c.providerNotes} notes at the provider`;
  lines.push(
    `${report.ok ? "CONSISTENT" : "INCONSISTENT"}: ${report.findings.length === 0 ? "no findings" : `${totalFindings(report)} finding(s)`} over ${c.tasks} tasks, ${c.transitions} transitions, ${c.executions} executions, ${c.auditEntries} audit entries in ${c.auditStreams} streams, ${provider} (${report.durationMs} ms, as of ${report.checkedAt}).`,
    "",
  );
  for (const check of consistencyChecks) {
    const s = report.checks[check];
    const verdict = s.skipped ? "skipped" : s.findings === 0 ? "ok" : `${s.findings} finding(s)`;
    lines.push(
      `  ${verdict.padEnd(14)} ${check.padEnd(16)} ${checkTitles[check]}${s.skipped ? ` — ${s.skipped}` : ` (${s.examined} examined)`}`,
    );
  }
  for (const check of consistencyChecks) {
    const findings = report.findings.filter((f) => f.check === check);
    if (findings.length === 0) continue;
    lines.push("", `${check}:`);
    for (const f of findings.slice(0, max)) lines.push(`  - [${f.code}] ${f.message}`);
    const more = report.checks[check].findings - Math.min(max, findings.length);
    if (more > 0) lines.push(`  … and ${more} more (--json lists ${findings.length})`);
  }
  if (report.withPeople.length > 0) {
    lines.push("", `With a person already (${report.withPeople.length}, not findings):`);
    for (const p of report.withPeople.slice(0, max)) lines.push(`  - ${p.message} With: ${p.with.join("; ")}.`);
    if (report.withPeople.length > max) lines.push(`  … and ${report.withPeople.length - max} more`);
  }
  if (report.settling.length > 0) {
    lines.push("", `Not yet due for reconciliation (${report.settling.length}, not findings):`);
    for (const s of report.settling.slice(0, max)) lines.push(`  - ${s.message}`);
  }
  return lines.join("\n");
}

function totalFindings(report: ConsistencyReport): number {
  return consistencyChecks.reduce((n, check) => n + report.checks[check].findings, 0);
}
