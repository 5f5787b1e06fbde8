import type { TaskPatch } from "@/lib/model/tasks/task-state";
import { formatUsd, formatInteger, shortIdentity } from "@/lib/adapters/console/shared/format";

/** A transition's patch as short lines a person can scan in the timeline. */
export function summarizePatch(patch: TaskPatch): string[] {
  const lines: string[] = [];
  const gates = Object.entries(patch.gates ?? {}).filter(([, v]) => v !== undefined);
  if (gates.length) lines.push(`gates: ${gates.map(([k, v]) => `${k} ${v ? "✓" : "✗"}`).join(", ")}`);
  const artifacts = Object.entries(patch.artifacts ?? {}).filter(([, v]) => v !== undefined);
  if (artifacts.length) {
    lines.push(
      `artifacts: ${artifacts.map(([k, v]) => (Array.isArray(v) ? `${k} (${v.length} file${v.length === 1 ? "" : "s"})` : k)).join(", ")}`,
    );
  }
  for (const key of ["active_agents", "completed_agents", "failed_agents"] as const) {
    const list = patch[key];
    if (list) lines.push(`${key.replace("_", " ")}: ${list.length ? list.map(shortIdentity).join(", ") : "none"}`);
  }
  const b = patch.budget;
  if (b) {
    const parts = [
      b.currency_committed_usd !== undefined && `committed ${formatUsd(b.currency_committed_usd)}`,
      b.currency_spent_usd !== undefined && `spent ${formatUsd(b.currency_spent_usd)}`,
      b.tokens_spent !== undefined && `${formatInteger(b.tokens_spent)} tokens`,
      b.hops_used !== undefined && `${formatInteger(b.hops_used)} hops`,
    ].filter((p): p is string => typeof p === "string");
    if (parts.length) lines.push(`budget: ${parts.join(", ")}`);
  }
  for (const s of patch.subtasks ?? []) {
    const changes = [
      s.status,
      s.mandatory === undefined ? undefined : s.mandatory ? "mandatory" : "optional",
      s.title && `“${s.title}”`,
    ].filter(Boolean);
    lines.push(`subtask ${s.id}: ${changes.join(", ") || "touched"}`);
  }
  return lines;
}
