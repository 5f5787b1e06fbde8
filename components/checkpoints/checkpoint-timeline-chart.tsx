"use client";

import { useRouter } from "next/navigation";
import type { ReactNode } from "react";
import { CartesianGrid, ResponsiveContainer, Scatter, ScatterChart, Tooltip, XAxis, YAxis } from "recharts";
import type { ScatterShapeProps } from "recharts/types/util/ScatterUtils";
import { executionStatusInfo } from "@/lib/adapters/console/reviews/reviews-format";
import { formatDateTime, shortIdentity } from "@/lib/adapters/console/shared/format";
import {
  checkpointHref,
  integrityStatusInfo,
  type IntegrityStatus,
} from "@/lib/adapters/console/checkpoints/checkpoints-format";
import {
  formatTick,
  type CheckpointMark,
  type EffectMark,
  type TimelineData,
  type VersionStep,
} from "@/lib/adapters/console/checkpoints/checkpoints-timeline";

/**
 * The checkpoint timeline: the task's version over time as a staircase (a
 * dot per transition), checkpoints on it at the version they captured, each
 * restore as a dashed link from its checkpoint to the version it wrote, and
 * the task's side effects in a lane below on the same time axis. Every mark
 * differs by shape and glyph as well as colour; the table beside it says the
 * same in words and is the keyboard's way in.
 */

/** The console's tokens (app/globals.css); SVG presentation attributes cannot read CSS variables. */
const ink = {
  version: "#3346c8",
  restore: "#7a2fb8",
  grid: "#e4e7ec",
  axis: "#5a6270",
  surface: "#ffffff",
};

const integrityInk: Record<IntegrityStatus, string> = { valid: "#17743b", corrupt: "#b42318", unverifiable: "#9a4a00" };

const effectInk: Record<string, string> = {
  success: "#17743b",
  danger: "#b42318",
  unknown: "#9a4a00",
  frozen: "#1a1d23",
  active: "#3346c8",
  neutral: "#5a6270",
  attention: "#7a4b00",
  warning: "#9a3412",
};

type Point =
  | ({ kind: "step" } & VersionStep)
  | ({ kind: "checkpoint" } & CheckpointMark)
  | ({ kind: "effect"; lane: 0 } & EffectMark)
  | { kind: "link"; t: number; v: number };

const yAxisWidth = 64;
const margin = { top: 12, right: 24, bottom: 4, left: 4 };

export function CheckpointTimelineChart({ data }: { data: TimelineData }) {
  const router = useRouter();
  const tick = (t: number) => formatTick(t, data.tickUnit);
  const steps: Point[] = data.steps.map((s) => ({ kind: "step", ...s }));
  const checkpoints: Point[] = data.checkpoints.map((c) => ({ kind: "checkpoint", ...c }));
  const effects: Point[] = data.effects.map((e) => ({ kind: "effect", lane: 0, ...e }));
  const xAxis = (hide: boolean) => (
    <XAxis
      dataKey="t"
      type="number"
      domain={data.domain}
      ticks={data.ticks}
      tickFormatter={tick}
      allowDataOverflow
      hide={hide}
      stroke={ink.axis}
      fontSize={12}
      name="time"
    />
  );
  return (
    <div className="ckpt-chart">
      <ResponsiveContainer width="100%" height={300}>
        <ScatterChart margin={margin} accessibilityLayer={false}>
          <CartesianGrid stroke={ink.grid} />
          {xAxis(false)}
          <YAxis
            dataKey="v"
            type="number"
            domain={data.versionDomain}
            ticks={data.versionTicks}
            allowDecimals={false}
            width={yAxisWidth}
            stroke={ink.axis}
            fontSize={12}
            tickFormatter={(v: number) => `v${v}`}
            label={{ value: "version", angle: -90, position: "insideLeft", offset: 8, fill: ink.axis, fontSize: 12 }}
          />
          <Tooltip content={<TimelineTooltip />} cursor={false} isAnimationActive={false} />
          <Scatter
            name="Task version"
            data={steps}
            line={{ stroke: ink.version, strokeWidth: 2 }}
            lineJointType="stepAfter"
            shape={StepShape}
            isAnimationActive={false}
          />
          {data.restores.map((r) => (
            <Scatter
              key={r.id}
              name="Restore"
              data={[
                { kind: "link", ...r.from },
                { kind: "link", ...r.to },
              ]}
              line={{ stroke: ink.restore, strokeWidth: 2, strokeDasharray: "5 4" }}
              shape={NoShape}
              tooltipType="none"
              isAnimationActive={false}
            />
          ))}
          <Scatter
            name="Checkpoints"
            data={checkpoints}
            shape={CheckpointShape}
            isAnimationActive={false}
            onClick={(item) => {
              const point = item.payload as Point | undefined;
              if (point?.kind === "checkpoint") router.push(checkpointHref(point.id));
            }}
          />
        </ScatterChart>
      </ResponsiveContainer>
      {effects.length === 0 ? (
        <p className="ckpt-chart__no-effects">No side effects recorded for this task.</p>
      ) : (
        <ResponsiveContainer width="100%" height={64}>
          <ScatterChart margin={{ ...margin, top: 4, bottom: 4 }} accessibilityLayer={false}>
            <CartesianGrid stroke={ink.grid} horizontal={false} />
            {xAxis(true)}
            <YAxis
              dataKey="lane"
              type="number"
              domain={[-1, 1]}
              ticks={[0]}
              width={yAxisWidth}
              stroke={ink.axis}
              fontSize={12}
              tickFormatter={() => "effects"}
            />
            <Tooltip content={<TimelineTooltip />} cursor={false} isAnimationActive={false} />
            <Scatter name="Side effects" data={effects} shape={EffectShape} isAnimationActive={false} />
          </ScatterChart>
        </ResponsiveContainer>
      )}
    </div>
  );
}

function pointOf(props: ScatterShapeProps): Point | undefined {
  return props.payload as Point | undefined;
}

function NoShape() {
  return <g />;
}

function StepShape(props: ScatterShapeProps) {
  const { cx, cy } = props;
  const point = pointOf(props);
  if (cx === undefined || cy === undefined || point?.kind !== "step") return <g />;
  if (point.restored) {
    // ↺: this version was written by a restore.
    return (
      <g>
        <circle cx={cx} cy={cy} r={8} fill={ink.surface} stroke={ink.restore} strokeWidth={2} />
        <text x={cx} y={cy + 4} textAnchor="middle" fontSize={11} fontWeight={700} fill={ink.restore}>
          ↺
        </text>
      </g>
    );
  }
  return <circle cx={cx} cy={cy} r={3} fill={ink.version} />;
}

function CheckpointShape(props: ScatterShapeProps) {
  const { cx, cy } = props;
  const point = pointOf(props);
  if (cx === undefined || cy === undefined || point?.kind !== "checkpoint") return <g />;
  const color = integrityInk[point.integrity];
  const label = `Checkpoint of version ${point.v}, ${integrityStatusInfo[point.integrity].label.toLowerCase()}`;
  switch (point.integrity) {
    case "valid":
      return (
        <g className="ckpt-chart__mark" role="img" aria-label={label}>
          <circle cx={cx} cy={cy} r={7} fill={color} stroke={ink.surface} strokeWidth={2} />
          <path d={`M${cx - 3},${cy} l2,2.5 l4,-5`} stroke={ink.surface} strokeWidth={1.6} fill="none" />
        </g>
      );
    case "corrupt":
      return (
        <g className="ckpt-chart__mark" role="img" aria-label={label}>
          <rect x={cx - 7} y={cy - 7} width={14} height={14} rx={2} fill={ink.surface} stroke={color} strokeWidth={2} />
          <path
            d={`M${cx - 4},${cy - 4} L${cx + 4},${cy + 4} M${cx + 4},${cy - 4} L${cx - 4},${cy + 4}`}
            stroke={color}
            strokeWidth={2.2}
          />
        </g>
      );
    case "unverifiable":
      return (
        <g className="ckpt-chart__mark" role="img" aria-label={label}>
          <path
            d={`M${cx},${cy - 9} L${cx + 8},${cy + 6} L${cx - 8},${cy + 6} Z`}
            fill={ink.surface}
            stroke={color}
            strokeWidth={2}
          />
          <text x={cx} y={cy + 4.5} textAnchor="middle" fontSize={10} fontWeight={700} fill={color}>
            ?
          </text>
        </g>
      );
  }
}

function EffectShape(props: ScatterShapeProps) {
  const { cx, cy } = props;
  const point = pointOf(props);
  if (cx === undefined || cy === undefined || point?.kind !== "effect") return <g />;
  const info = executionStatusInfo[point.status];
  const color = effectInk[info.tone] ?? ink.axis;
  return (
    <g>
      <path
        d={`M${cx},${cy - 12} L${cx + 12},${cy} L${cx},${cy + 12} L${cx - 12},${cy} Z`}
        fill={ink.surface}
        stroke={color}
        strokeWidth={2}
      />
      <text x={cx} y={cy + 4.5} textAnchor="middle" fontSize={12} fontWeight={800} fill={color}>
        {info.glyph}
      </text>
    </g>
  );
}

function TimelineTooltip({ active, payload }: { active?: boolean; payload?: ReadonlyArray<{ payload?: unknown }> }) {
  const point = active ? (payload?.[0]?.payload as Point | undefined) : undefined;
  if (!point || point.kind === "link") return null;
  const when = formatDateTime(new Date(point.t));
  switch (point.kind) {
    case "step":
      return (
        <div className="ckpt-tooltip">
          <p className="ckpt-tooltip__title">
            Version {point.v}:{" "}
            {point.fromStatus === null
              ? `created in ${point.status}`
              : point.fromStatus === point.status
                ? `updated in ${point.status}`
                : `${point.fromStatus} → ${point.status}`}
          </p>
          {point.restored ? <p>Written by a restore</p> : null}
          <p>
            {shortIdentity(point.actor)} · {when}
          </p>
        </div>
      );
    case "checkpoint":
      return (
        <div className="ckpt-tooltip">
          <p className="ckpt-tooltip__title">
            Checkpoint of version {point.v} · {integrityStatusInfo[point.integrity].glyph}{" "}
            {integrityStatusInfo[point.integrity].label}
          </p>
          <p>{point.triggerLabel}</p>
          <p>
            {shortIdentity(point.createdBy)} · {when}
          </p>
          <p className="ckpt-tooltip__hint">Click to inspect</p>
        </div>
      );
    case "effect": {
      const info = executionStatusInfo[point.status];
      return (
        <div className="ckpt-tooltip">
          <p className="ckpt-tooltip__title">
            {point.tool} ({point.toolCallId}){point.irreversible ? " · irreversible" : ""}
          </p>
          <p>
            {info.glyph} {info.label}
          </p>
          <p>
            intent recorded at version {point.v} · {when}
          </p>
        </div>
      );
    }
  }
}

/** The chart's key, in HTML: shapes and words, not colours alone. */
export function TimelineLegend() {
  const sample = (children: ReactNode) => (
    <svg width="22" height="18" viewBox="-11 -9 22 18" aria-hidden="true" className="ckpt-legend__glyph">
      {children}
    </svg>
  );
  return (
    <ul className="ckpt-legend" aria-label="Key">
      <li>
        {sample(
          <>
            <path d="M-10,4 L0,4 L0,-4 L10,-4" stroke={ink.version} strokeWidth={2} fill="none" />
            <circle r={3} cx={0} cy={-4} fill={ink.version} />
          </>,
        )}
        Task version (a dot per transition)
      </li>
      <li>
        {sample(
          <>
            <circle r={7} fill={integrityInk.valid} />
            <path d="M-3,0 l2,2.5 l4,-5" stroke={ink.surface} strokeWidth={1.6} fill="none" />
          </>,
        )}
        Valid checkpoint
      </li>
      <li>
        {sample(
          <>
            <rect
              x={-7}
              y={-7}
              width={14}
              height={14}
              rx={2}
              fill={ink.surface}
              stroke={integrityInk.corrupt}
              strokeWidth={2}
            />
            <path d="M-4,-4 L4,4 M4,-4 L-4,4" stroke={integrityInk.corrupt} strokeWidth={2.2} />
          </>,
        )}
        Corrupt checkpoint
      </li>
      <li>
        {sample(
          <>
            <path d="M0,-8 L8,7 L-8,7 Z" fill={ink.surface} stroke={integrityInk.unverifiable} strokeWidth={2} />
            <text y={5} textAnchor="middle" fontSize={10} fontWeight={700} fill={integrityInk.unverifiable}>
              ?
            </text>
          </>,
        )}
        Unverifiable checkpoint
      </li>
      <li>
        {sample(<path d="M-10,0 L10,0" stroke={ink.restore} strokeWidth={2} strokeDasharray="5 4" />)}
        <span>
          Restore: from the checkpoint to the version it wrote (<span aria-hidden="true">↺</span>)
        </span>
      </li>
      <li>
        {sample(<path d="M0,-8 L8,0 L0,8 L-8,0 Z" fill={ink.surface} stroke={ink.axis} strokeWidth={2} />)}
        Side effect, at its intent, marked with its outcome (✓ ✗ ? ■)
      </li>
    </ul>
  );
}
