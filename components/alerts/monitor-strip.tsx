import { RelativeTime } from "@/components/relative-time";
import type { MonitorStrip as Strip } from "@/lib/adapters/console/alerts/alerts";
import { pluralize } from "@/lib/adapters/console/shared/format";

const checkNames: Record<string, string> = {
  task_states: "task states",
  success_evidence: "success evidence",
  unknown_outcomes: "unknown outcomes",
  write_conflicts: "refused writes",
  checkpoint_restores: "restore attempts",
  audit_chains: "audit chains",
};

/** The continuous invariant monitor at a glance: when it last looked, at what, and what it found. */
export function MonitorStrip({ monitor }: { monitor: Strip }) {
  const run = monitor.lastRun;
  if (!run) {
    return (
      <section className="monitor-strip monitor-strip--none" aria-label="Invariant monitor">
        <strong>Invariant monitor:</strong> no pass yet. The server runs one every VERITY_MONITOR_INTERVAL_MS (30 s by
        default) while its background loop is on.
      </section>
    );
  }
  const checks = Object.entries(run.checks);
  const failed = checks.filter(([, c]) => c.error);
  return (
    <section className={`monitor-strip ${failed.length ? "monitor-strip--error" : ""}`} aria-label="Invariant monitor">
      <p className="monitor-strip__head">
        <strong>Invariant monitor</strong> · last pass <RelativeTime value={run.finishedAt ?? run.startedAt} /> ·{" "}
        {pluralize(checks.length, "check")} ·{" "}
        <span className={run.violations > 0 ? "monitor-strip__violations" : undefined}>
          {pluralize(run.violations, "violation")} seen
        </span>
        {monitor.runningSince ? <span className="subtle"> · a pass is running now</span> : null}
      </p>
      <ul className="monitor-strip__checks">
        {checks.map(([name, c]) => (
          <li key={name} className={c.error ? "monitor-strip__check--error" : undefined}>
            {checkNames[name] ?? name}:{" "}
            {c.error ? `failed (${c.error})` : `${c.examined ?? 0} read, ${c.violations ?? 0} in violation`}
          </li>
        ))}
      </ul>
    </section>
  );
}
