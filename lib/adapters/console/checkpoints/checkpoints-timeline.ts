import type { CheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-schema";
import type { CheckpointRestoreView } from "@/lib/model/checkpoints/restore-plan";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import type { ExecutionStatus } from "@/lib/model/executions/execution-rules";
import type { ExecutionView } from "@/lib/stores/execution-store";
import type { TransitionView } from "@/lib/stores/tasks/task-views";
import { pluralize, shortIdentity } from "@/lib/adapters/console/shared/format";
import {
  integrityStatusInfo,
  triggerLabels,
  type IntegrityStatus,
} from "@/lib/adapters/console/checkpoints/checkpoints-format";

/**
 * A task's checkpoint timeline as plain numbers and strings: what the chart
 * (a client component) draws. Time runs along x (milliseconds), the task's
 * version up y; checkpoints sit at the version they captured, restores link
 * the checkpoint they came from to the version they wrote, and side effects
 * run in a lane of their own below, at the time their intent was recorded.
 */

export interface VersionStep {
  t: number;
  v: number;
  status: string;
  fromStatus: string | null;
  actor: string;
  /** This version was written by a restore. */
  restored: boolean;
}

export interface CheckpointMark {
  t: number;
  v: number;
  id: string;
  trigger: CheckpointTrigger;
  triggerLabel: string;
  integrity: IntegrityStatus;
  createdBy: string;
}

export interface EffectMark {
  t: number;
  /** The version the task was at when the intent was recorded. */
  v: number;
  id: string;
  tool: string;
  toolCallId: string;
  status: ExecutionStatus;
  irreversible: boolean;
}

export interface RestoreLink {
  id: string;
  checkpointId: string;
  rewind: boolean;
  from: { t: number; v: number };
  to: { t: number; v: number };
}

export interface TimelineData {
  steps: VersionStep[];
  checkpoints: CheckpointMark[];
  effects: EffectMark[];
  restores: RestoreLink[];
  /** Time domain with a little room on each side, so no mark sits on the frame. */
  domain: [number, number];
  ticks: number[];
  /** The precision the tick labels need: seconds for a minute's span, dates past a day. */
  tickUnit: TickUnit;
  versionDomain: [number, number];
  versionTicks: number[];
  /** The same facts in one sentence, for people who cannot see the chart. */
  summary: string;
}

export type TickUnit = "millisecond" | "second" | "minute" | "day";

export interface TimelineInput {
  transitions: readonly TransitionView[];
  executions: readonly ExecutionView[];
  checkpoints: ReadonlyArray<
    Pick<CheckpointSummary, "id" | "stateVersion" | "trigger" | "createdAt" | "createdBy"> & {
      integrity: IntegrityStatus;
    }
  >;
  restores: ReadonlyArray<
    Pick<CheckpointRestoreView, "id" | "checkpointId" | "outcome" | "rewind" | "toVersion" | "createdAt">
  >;
}

export function buildTimeline(input: TimelineInput): TimelineData {
  const restoredVersions = new Set(
    input.restores.filter((r) => r.outcome === "applied" && r.toVersion !== null).map((r) => r.toVersion as number),
  );
  const steps: VersionStep[] = [...input.transitions]
    .sort((a, b) => a.toVersion - b.toVersion)
    .map((t) => ({
      t: t.createdAt.getTime(),
      v: t.toVersion,
      status: t.toStatus,
      fromStatus: t.fromStatus,
      actor: t.actor,
      restored: restoredVersions.has(t.toVersion),
    }));
  const checkpoints: CheckpointMark[] = input.checkpoints.map((c) => ({
    t: c.createdAt.getTime(),
    v: c.stateVersion,
    id: c.id,
    trigger: c.trigger,
    triggerLabel: triggerLabels[c.trigger],
    integrity: c.integrity,
    createdBy: c.createdBy,
  }));
  const effects: EffectMark[] = input.executions.map((e) => ({
    t: e.createdAt.getTime(),
    v: versionAt(steps, e.createdAt.getTime()),
    id: e.id,
    tool: e.tool,
    toolCallId: e.toolCallId,
    status: e.status,
    irreversible: e.irreversible,
  }));
  const checkpointById = new Map(checkpoints.map((c) => [c.id, c]));
  const stepByVersion = new Map(steps.map((s) => [s.v, s]));
  const restores: RestoreLink[] = input.restores.flatMap((r) => {
    const from = checkpointById.get(r.checkpointId);
    if (r.outcome !== "applied" || r.toVersion === null || !from) return [];
    const to = stepByVersion.get(r.toVersion);
    return [
      {
        id: r.id,
        checkpointId: r.checkpointId,
        rewind: r.rewind,
        from: { t: from.t, v: from.v },
        to: { t: to?.t ?? r.createdAt.getTime(), v: r.toVersion },
      },
    ];
  });

  const times = [...steps.map((s) => s.t), ...checkpoints.map((c) => c.t), ...effects.map((e) => e.t)];
  const domain = timeDomain(times);
  const { ticks, unit } = timeTicks(domain);
  const versions = [...steps.map((s) => s.v), ...checkpoints.map((c) => c.v)];
  const versionDomain: [number, number] = versions.length ? [Math.min(...versions), Math.max(...versions)] : [1, 1];
  return {
    steps,
    checkpoints,
    effects,
    restores,
    domain,
    ticks,
    tickUnit: unit,
    versionDomain: [versionDomain[0] - 0.5, versionDomain[1] + 0.5],
    versionTicks: integerTicks(versionDomain[0], versionDomain[1], 12),
    summary: summarize(steps, checkpoints, effects, restores),
  };
}

/** The version in force at `t`: the newest step at or before it (the first, when `t` is earlier than every step). */
export function versionAt(steps: readonly VersionStep[], t: number): number {
  let version = steps[0]?.v ?? 1;
  for (const step of steps) {
    if (step.t > t) break;
    version = step.v;
  }
  return version;
}

/** 3% of the span on each side; a single moment gets a minute around it. */
export function timeDomain(times: readonly number[]): [number, number] {
  if (times.length === 0) {
    const now = Date.now();
    return [now - 30_000, now + 30_000];
  }
  const min = Math.min(...times);
  const max = Math.max(...times);
  if (max === min) return [min - 30_000, max + 30_000];
  const pad = Math.max((max - min) * 0.03, 5);
  return [min - pad, max + pad];
}

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
const day = 24 * hour;
const tickSteps = [
  1,
  2,
  5,
  10,
  20,
  50,
  100,
  200,
  500,
  second,
  2 * second,
  5 * second,
  10 * second,
  15 * second,
  30 * second,
  minute,
  2 * minute,
  5 * minute,
  10 * minute,
  15 * minute,
  30 * minute,
  hour,
  2 * hour,
  3 * hour,
  6 * hour,
  12 * hour,
  day,
  2 * day,
  7 * day,
  14 * day,
  30 * day,
  90 * day,
  365 * day,
];

/**
 * Round-valued ticks (every 5 s, every 15 min, every day …) inside the
 * domain, at most `max` of them, and the unit their labels need. UTC, like
 * every time the console shows.
 */
export function timeTicks([from, to]: [number, number], max = 7): { ticks: number[]; unit: TickUnit } {
  const span = Math.max(to - from, 1);
  const step = tickSteps.find((s) => span / s <= max) ?? tickSteps[tickSteps.length - 1]!;
  const ticks: number[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) ticks.push(t);
  const unit: TickUnit = step < second ? "millisecond" : step < minute ? "second" : step < day ? "minute" : "day";
  return { ticks, unit };
}

const pad2 = (n: number) => String(n).padStart(2, "0");
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** A tick label in UTC at the unit's precision: "14:03:07.250", "14:03:07", "14:03", "30 Nov". */
export function formatTick(t: number, unit: TickUnit): string {
  const d = new Date(t);
  const hm = `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
  switch (unit) {
    case "millisecond":
      return `${hm}:${pad2(d.getUTCSeconds())}.${String(d.getUTCMilliseconds()).padStart(3, "0")}`;
    case "second":
      return `${hm}:${pad2(d.getUTCSeconds())}`;
    case "minute":
      return hm;
    case "day":
      return `${pad2(d.getUTCDate())} ${months[d.getUTCMonth()]}`;
  }
}

/** Whole numbers from `min` to `max`, thinned to at most `max` ticks with a round stride. */
export function integerTicks(min: number, maxValue: number, most: number): number[] {
  const span = Math.max(maxValue - min, 0);
  const stride = [1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000].find((s) => span / s < most) ?? Math.ceil(span / most);
  const ticks: number[] = [];
  for (let v = Math.ceil(min / stride) * stride; v <= maxValue; v += stride) ticks.push(v);
  if (ticks.length === 0) ticks.push(min);
  return ticks;
}

function summarize(
  steps: VersionStep[],
  checkpoints: CheckpointMark[],
  effects: EffectMark[],
  restores: RestoreLink[],
): string {
  const first = steps[0];
  const last = steps[steps.length - 1];
  const parts = [first && last ? `Versions ${first.v} to ${last.v}` : "No transitions shown"];
  if (checkpoints.length === 0) parts.push("no checkpoints");
  else {
    const counts = (Object.keys(integrityStatusInfo) as IntegrityStatus[])
      .map((s) => [s, checkpoints.filter((c) => c.integrity === s).length] as const)
      .filter(([, n]) => n > 0)
      .map(([s, n]) => `${n} ${integrityStatusInfo[s].label.toLowerCase()}`);
    parts.push(
      `${pluralize(checkpoints.length, "checkpoint")} (${counts.join(", ")}) at versions ${[...new Set(checkpoints.map((c) => c.v))].sort((a, b) => a - b).join(", ")}`,
    );
  }
  parts.push(
    effects.length
      ? `${pluralize(effects.length, "side effect")} (${effects.map((e) => `${e.tool} ${e.status}`).join(", ")})`
      : "no side effects",
  );
  if (restores.length) {
    parts.push(restores.map((r) => `restore of version ${r.from.v} written as version ${r.to.v}`).join(", "));
  }
  const restoredBy = steps.filter((s) => s.restored).map((s) => `${shortIdentity(s.actor)} at v${s.v}`);
  if (restoredBy.length && !restores.length) parts.push(`restored versions: ${restoredBy.join(", ")}`);
  return `${parts.join("; ")}.`;
}
