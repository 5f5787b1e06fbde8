"use client";

import { useRouter } from "next/navigation";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { DashboardData } from "@/lib/adapters/console/dashboard/dashboard";
import {
  dashboardLinks,
  dayLabel,
  formatUsdShort,
  minuteLabel,
} from "@/lib/adapters/console/dashboard/dashboard-format";

/**
 * The dashboard's drawings. Each is decoration over numbers the card also
 * states in words and offers as links (the keyboard's and the screen
 * reader's way in), so the SVG itself is hidden from assistive technology;
 * a click on a bar goes where the matching link goes.
 */

/** The console's tokens (app/globals.css); SVG presentation attributes cannot read CSS variables. */
export const ink = {
  accent: "#3346c8",
  accentSoft: "#8d9ae6",
  grid: "#e4e7ec",
  axis: "#5a6270",
  unknown: "#9a4a00",
  frozen: "#1a1d23",
  success: "#17743b",
  version: "#3346c8",
  fencing: "#b42318",
};

export const workflowInk = ["#3346c8", "#0f766e", "#7a2fb8", "#9a4a00"];

export const severityInk: Record<string, string> = {
  critical: "#b42318",
  high: "#9a3412",
  medium: "#7a4b00",
  low: "#5a6270",
};
export function severityColor(severity: string): string {
  return severityInk[severity] ?? "#5a6270";
}

const axisProps = { stroke: ink.axis, fontSize: 12, tickLine: false } as const;
const noAnimation = { isAnimationActive: false } as const;

type ClickedBar = { payload?: unknown };

export function TasksByStateChart({ data, workflows }: { data: DashboardData["tasksByStatus"]; workflows: string[] }) {
  const router = useRouter();
  const rows = data.map((s) => ({ status: s.status, total: s.total, ...s.byWorkflow }));
  const open = (bar: ClickedBar) => {
    const status = (bar.payload as { status?: string } | undefined)?.status;
    if (status) router.push(dashboardLinks.tasksWithStatus(status));
  };
  return (
    <div className="dash-chart" aria-hidden="true">
      <ResponsiveContainer width="100%" height={Math.max(120, rows.length * 30 + 36)}>
        <BarChart
          data={rows}
          layout="vertical"
          margin={{ top: 4, right: 16, bottom: 4, left: 8 }}
          accessibilityLayer={false}
        >
          <CartesianGrid stroke={ink.grid} horizontal={false} />
          <XAxis type="number" allowDecimals={false} {...axisProps} />
          <YAxis type="category" dataKey="status" width={150} {...axisProps} interval={0} />
          <Tooltip cursor={{ fill: "rgb(51 70 200 / 8%)" }} {...noAnimation} />
          {workflows.map((w, i) => (
            <Bar
              key={w}
              dataKey={w}
              name={w}
              stackId="tasks"
              fill={workflowInk[i % workflowInk.length]}
              cursor="pointer"
              onClick={open}
              {...noAnimation}
            />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

export function PerMinuteChart({
  data,
  series,
  onClickHref,
}: {
  data: ReadonlyArray<object>;
  series: Array<{ key: string; name: string; color: string }>;
  onClickHref: string;
}) {
  const router = useRouter();
  return (
    <div className="dash-chart" aria-hidden="true">
      <ResponsiveContainer width="100%" height={180}>
        <BarChart
          data={data}
          margin={{ top: 8, right: 8, bottom: 0, left: 0 }}
          accessibilityLayer={false}
          barCategoryGap={1}
        >
          <CartesianGrid stroke={ink.grid} vertical={false} />
          <XAxis dataKey="at" tickFormatter={minuteLabel} interval={9} {...axisProps} />
          <YAxis allowDecimals={false} width={36} {...axisProps} />
          <Tooltip
            labelFormatter={(label) => `${minuteLabel(String(label))} UTC`}
            cursor={{ fill: "rgb(51 70 200 / 8%)" }}
            {...noAnimation}
          />
          {series.map((s) => (
            <Bar
              key={s.key}
              dataKey={s.key}
              name={s.name}
              stackId="m"
              fill={s.color}
              cursor="pointer"
              onClick={() => router.push(onClickHref)}
              {...noAnimation}
            />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

export function UnknownAgeChart({ data }: { data: DashboardData["unknownOutcomes"]["buckets"] }) {
  const router = useRouter();
  return (
    <div className="dash-chart" aria-hidden="true">
      <ResponsiveContainer width="100%" height={180}>
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid stroke={ink.grid} vertical={false} />
          <XAxis dataKey="label" {...axisProps} />
          <YAxis allowDecimals={false} width={36} {...axisProps} />
          <Tooltip cursor={{ fill: "rgb(154 74 0 / 8%)" }} {...noAnimation} />
          <Bar
            dataKey="OUTCOME_UNKNOWN"
            name="Outcome unknown"
            stackId="age"
            fill={ink.unknown}
            cursor="pointer"
            onClick={() => router.push(dashboardLinks.unknownOutcomes)}
            {...noAnimation}
          />
          <Bar
            dataKey="NEEDS_HUMAN"
            name="Frozen: needs a person"
            stackId="age"
            fill={ink.frozen}
            cursor="pointer"
            onClick={() => router.push(dashboardLinks.frozen)}
            {...noAnimation}
          />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

export function ReviewsPerDayChart({ data }: { data: DashboardData["reviews"]["perDay"] }) {
  const router = useRouter();
  return (
    <div className="dash-chart" aria-hidden="true">
      <ResponsiveContainer width="100%" height={180}>
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid stroke={ink.grid} vertical={false} />
          <XAxis dataKey="day" tickFormatter={dayLabel} interval={1} {...axisProps} />
          <YAxis allowDecimals={false} width={36} {...axisProps} />
          <Tooltip
            labelFormatter={(label) => dayLabel(String(label))}
            cursor={{ fill: "rgb(51 70 200 / 8%)" }}
            {...noAnimation}
          />
          <Bar
            dataKey="opened"
            name="Opened"
            fill={ink.unknown}
            cursor="pointer"
            onClick={() => router.push(dashboardLinks.reviewsAll)}
            {...noAnimation}
          />
          <Bar
            dataKey="decided"
            name="Decided"
            fill={ink.success}
            cursor="pointer"
            onClick={() => router.push(dashboardLinks.reviewsAll)}
            {...noAnimation}
          />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

export function AlertsPerDayChart({
  data,
  severities,
}: {
  data: DashboardData["alerts"]["perDay"];
  severities: string[];
}) {
  const router = useRouter();
  const rows = data.map((p) => ({ day: p.day, ...p.bySeverity }));
  return (
    <div className="dash-chart" aria-hidden="true">
      <ResponsiveContainer width="100%" height={180}>
        <BarChart data={rows} margin={{ top: 8, right: 8, bottom: 0, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid stroke={ink.grid} vertical={false} />
          <XAxis dataKey="day" tickFormatter={dayLabel} interval={1} {...axisProps} />
          <YAxis allowDecimals={false} width={36} {...axisProps} />
          <Tooltip
            labelFormatter={(label) => dayLabel(String(label))}
            cursor={{ fill: "rgb(180 35 24 / 6%)" }}
            {...noAnimation}
          />
          {severities.map((s) => (
            <Bar
              key={s}
              dataKey={s}
              name={s}
              stackId="sev"
              fill={severityColor(s)}
              cursor="pointer"
              onClick={() => router.push(dashboardLinks.openAlertsOfSeverity(s))}
              {...noAnimation}
            />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

export function BudgetChart({ data }: { data: DashboardData["budget"] }) {
  const router = useRouter();
  const open = (bar: ClickedBar) => {
    const workflow = (bar.payload as { workflow?: string } | undefined)?.workflow;
    if (workflow) router.push(dashboardLinks.tasksOfWorkflow(workflow));
  };
  return (
    <div className="dash-chart" aria-hidden="true">
      <ResponsiveContainer width="100%" height={Math.max(100, data.length * 34 + 36)}>
        <BarChart
          data={data}
          layout="vertical"
          margin={{ top: 4, right: 16, bottom: 4, left: 8 }}
          accessibilityLayer={false}
        >
          <CartesianGrid stroke={ink.grid} horizontal={false} />
          <XAxis type="number" tickFormatter={(v: number) => formatUsdShort(v)} {...axisProps} />
          <YAxis type="category" dataKey="workflow" width={110} {...axisProps} />
          <Tooltip
            formatter={(v) => formatUsdShort(Number(v))}
            cursor={{ fill: "rgb(51 70 200 / 8%)" }}
            {...noAnimation}
          />
          <Bar dataKey="usdSpent" name="USD spent" fill={ink.accent} cursor="pointer" onClick={open} {...noAnimation} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
