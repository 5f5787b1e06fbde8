"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useRef, useState, type ReactNode } from "react";
import type { DashboardData } from "@/lib/adapters/console/dashboard/dashboard";
import {
  ageSince,
  dashboardLinks,
  describeAlerts,
  describeBudget,
  describeConflicts,
  describeReviews,
  describeTasksByState,
  describeTransitions,
  describeUnknownOutcomes,
  formatUsdShort,
} from "@/lib/adapters/console/dashboard/dashboard-format";
import { formatInteger } from "@/lib/adapters/console/shared/format";
import { formatDuration } from "@/lib/core/format-duration";
import {
  AlertsPerDayChart,
  BudgetChart,
  ink,
  PerMinuteChart,
  ReviewsPerDayChart,
  severityColor,
  TasksByStateChart,
  UnknownAgeChart,
  workflowInk,
} from "@/components/dashboard/dashboard-charts";
import { ConsoleRouteError, fetchConsoleJson } from "@/lib/adapters/console/shared/console-fetch";
import type { LiveTopic } from "@/lib/model/live/change-events";
import { isPolling, useLiveTopic, type LiveStatus as StreamStatus } from "@/components/live/live-events";
import "@/components/dashboard/dashboard.css";

function fetchDashboard(): Promise<DashboardData> {
  return fetchConsoleJson<DashboardData>("/api/console/dashboard");
}

/** Only while no event can come (the stream down, or live updates turned off). */
const pollMs = 10_000;

/**
 * What moves the dashboard's numbers: tasks (by state, transitions, budget),
 * executions (unknown outcomes), reviews and alerts. A refused stale write
 * moves no row: it shows with the next change or poll.
 */
const dashboardTopic: LiveTopic = { kinds: ["task", "execution", "review", "alert"] };
/** A burst of changes is read once, 500 ms after it pauses... */
const eventDebounceMs = 500;
/**
 * ...or once every 10 s while it does not (steady writes): each read is the
 * whole set of aggregates (about a second at a million tasks, docs/dashboard.md),
 * so a viewer never reads more often than the poll did, and at rest not at all.
 */
const eventMaxWaitMs = pollMs;

/**
 * The system's health at a glance: four headline numbers, then one card per
 * chart. Seeded by the server render and read again when the page's stream
 * (components/live/live-events.tsx) brings a change it shows; polled only
 * while no event can come. A failed read keeps the last numbers on screen
 * and says they are not live.
 */
/** What the numbers say, without the moment they were read. */
function contentOf(data: DashboardData): string {
  return JSON.stringify({ ...data, generatedAt: null });
}

/** The next step from the dashboard: what waits on this person, in one list (docs/inbox.md). */
function InboxCallout({ total }: { total: number }) {
  return (
    <p className="dash-inbox" data-testid="dashboard-inbox">
      <span>
        <strong>{formatInteger(total)}</strong> {total === 1 ? "item waits on people" : "items wait on people"} that
        your role can act on: frozen actions, escalated tasks, gates and alerts.
      </span>
      <Link href="/inbox" className="button button--primary button--small">
        Open your inbox
      </Link>
    </p>
  );
}

export function DashboardView({
  initial,
  inboxTotal = null,
}: {
  initial: DashboardData;
  /** The person's inbox total, when their role has an inbox. */
  inboxTotal?: number | null;
}) {
  // What asked for the numbers last, shown on the status line (data-refreshed-by): that the
  // dashboard followed a change by its stream and not by a poll is what the e2e spec checks.
  const askedBy = useRef<"stream" | "poll">("poll");
  const [refreshedBy, setRefreshedBy] = useState<"stream" | "poll" | null>(null);
  const refetch = useRef<() => void>(() => undefined);
  const stream = useLiveTopic(
    dashboardTopic,
    () => {
      askedBy.current = "stream";
      refetch.current();
    },
    eventDebounceMs,
    eventMaxWaitMs,
  );
  const polling = isPolling(stream.status);
  // The numbers on screen, to tell a read that changed them from one that did not.
  const shown = useRef(initial);
  const query = useQuery({
    queryKey: ["dashboard"],
    queryFn: async () => {
      const by = askedBy.current;
      askedBy.current = "poll";
      const data = await fetchDashboard();
      // Only a read that brought other numbers counts as a refresh (each read has its own time).
      if (contentOf(data) !== contentOf(shown.current)) setRefreshedBy(by);
      return data;
    },
    initialData: initial,
    initialDataUpdatedAt: () => Date.now(),
    refetchInterval: polling ? pollMs : false,
    staleTime: polling ? pollMs - 1000 : Infinity,
    retry: false,
  });
  useEffect(() => {
    refetch.current = () => void query.refetch();
  });
  const d = query.data;
  useEffect(() => {
    shown.current = d;
  });
  const workflows = [...new Set(d.tasksByStatus.flatMap((s) => Object.keys(s.byWorkflow)))].sort();
  const conflictsTotal = d.headline.conflictsLastHour;
  const transitionsTotal = d.transitionsPerMinute.reduce((n, m) => n + m.count, 0);
  const alertsRaised = d.alerts.perDay.reduce((n, p) => n + p.total, 0);
  const reviewsActivity = d.reviews.perDay.reduce((n, p) => n + p.opened + p.decided, 0);

  return (
    <>
      <header className="page-header">
        <div className="page-header__row">
          <h1>Dashboard</h1>
          <div className="page-header__aside">
            <LiveStatus
              error={query.error}
              updatedAt={d.generatedAt}
              stream={stream.status}
              refreshedBy={refreshedBy}
            />
          </div>
        </div>
        <p className="lede">
          The system&apos;s health now. Every number and chart links to the list behind it; times are UTC.
        </p>
      </header>

      {inboxTotal !== null ? <InboxCallout total={inboxTotal} /> : null}

      <section aria-label="Headline numbers" className="dash-headline">
        <Headline
          href={dashboardLinks.openAlerts}
          value={d.headline.openAlerts}
          label="open alerts"
          tone={d.headline.openAlerts > 0 ? "danger" : "calm"}
        />
        <Headline
          href={dashboardLinks.unknownOutcomes}
          value={d.headline.unknownOutcomes}
          label="unknown outcomes"
          tone={d.headline.unknownOutcomes > 0 ? "warning" : "calm"}
          note={
            d.unknownOutcomes.oldestSince
              ? `oldest ${ageSince(d.unknownOutcomes.oldestSince, d.generatedAt)}`
              : undefined
          }
        />
        <Headline
          href={dashboardLinks.reviewsWaiting}
          value={d.headline.reviewBacklog}
          label="reviews waiting"
          tone={d.headline.reviewBacklog > 0 ? "warning" : "calm"}
          note={
            d.reviews.oldestWaitingSince ? `oldest ${ageSince(d.reviews.oldestWaitingSince, d.generatedAt)}` : undefined
          }
        />
        <Headline
          href={dashboardLinks.staleWrites}
          value={conflictsTotal}
          label="stale writes, last hour"
          tone={conflictsTotal > 0 ? "warning" : "calm"}
        />
      </section>

      <div className="dash-grid">
        <ChartCard id="tasks-by-state" title="Tasks by state" summary={describeTasksByState(d)} wide>
          {d.tasksByStatus.length === 0 ? (
            <Empty>No tasks yet. Agents create them through the API.</Empty>
          ) : (
            <>
              <TasksByStateChart data={d.tasksByStatus} workflows={workflows} />
              <SwatchLegend
                items={workflows.map((w, i) => ({
                  label: w,
                  color: workflowInk[i % workflowInk.length]!,
                  href: dashboardLinks.tasksOfWorkflow(w),
                }))}
              />
              <ul className="dash-links" aria-label="Tasks by state">
                {d.tasksByStatus.map((s) => (
                  <li key={s.status}>
                    <Link href={dashboardLinks.tasksWithStatus(s.status)} className="dash-link-chip">
                      <span>{s.status}</span> <strong>{formatInteger(s.total)}</strong>
                    </Link>
                  </li>
                ))}
              </ul>
            </>
          )}
        </ChartCard>

        <ChartCard id="unknown-outcomes" title="Unknown outcomes and their age" summary={describeUnknownOutcomes(d)}>
          <p className="dash-figure">
            <Link href={dashboardLinks.unknownOutcomes}>
              <strong>{formatInteger(d.unknownOutcomes.count)}</strong> outcome unknown
            </Link>
            <Link href={dashboardLinks.frozen}>
              <strong>{formatInteger(d.unknownOutcomes.frozen)}</strong> frozen for people
            </Link>
          </p>
          {d.unknownOutcomes.count + d.unknownOutcomes.frozen === 0 ? (
            <Empty>Every external call has a known outcome.</Empty>
          ) : (
            <>
              <UnknownAgeChart data={d.unknownOutcomes.buckets} />
              <SwatchLegend
                items={[
                  { label: "Outcome unknown", color: ink.unknown, href: dashboardLinks.unknownOutcomes },
                  { label: "Frozen: needs a person", color: ink.frozen, href: dashboardLinks.frozen },
                ]}
              />
            </>
          )}
        </ChartCard>

        <ChartCard
          id="transitions"
          title="Transitions per minute, last 60 minutes"
          summary={describeTransitions(d)}
          more={{ href: dashboardLinks.tasks, label: "Tasks, most recently changed first" }}
        >
          {transitionsTotal === 0 ? (
            <Empty>No task changed state in the last hour.</Empty>
          ) : (
            <PerMinuteChart
              data={d.transitionsPerMinute}
              series={[{ key: "count", name: "State changes", color: ink.accent }]}
              onClickHref={dashboardLinks.tasks}
            />
          )}
        </ChartCard>

        <ChartCard
          id="reviews"
          title="Review backlog and time to decision"
          summary={describeReviews(d)}
          more={{ href: dashboardLinks.reviewsWaiting, label: "Review queue" }}
        >
          <dl className="dash-stats">
            <div>
              <dt>Waiting</dt>
              <dd>
                <Link href={dashboardLinks.reviewsWaiting}>{formatInteger(d.reviews.open + d.reviews.escalated)}</Link>
              </dd>
            </div>
            <div>
              <dt>Median to decision</dt>
              <dd>{d.reviews.medianDecisionMs === null ? "—" : formatDuration(d.reviews.medianDecisionMs)}</dd>
            </div>
            <div>
              <dt>90th percentile</dt>
              <dd>{d.reviews.p90DecisionMs === null ? "—" : formatDuration(d.reviews.p90DecisionMs)}</dd>
            </div>
          </dl>
          {reviewsActivity === 0 ? (
            <Empty>No review opened or decided in the last 14 days.</Empty>
          ) : (
            <>
              <ReviewsPerDayChart data={d.reviews.perDay} />
              <SwatchLegend
                items={[
                  { label: "Opened", color: ink.unknown, href: dashboardLinks.reviewsAll },
                  { label: "Decided", color: ink.success, href: dashboardLinks.reviewsAll },
                ]}
              />
            </>
          )}
        </ChartCard>

        <ChartCard
          id="alerts"
          title="Divergence and consistency alerts, last 14 days"
          summary={describeAlerts(d)}
          more={{ href: dashboardLinks.openAlerts, label: "Open alerts" }}
        >
          {alertsRaised === 0 && d.alerts.openTotal === 0 ? (
            <Empty>No alert raised in the last 14 days, and none open.</Empty>
          ) : (
            <>
              {alertsRaised > 0 ? <AlertsPerDayChart data={d.alerts.perDay} severities={d.alerts.severities} /> : null}
              <SwatchLegend
                items={d.alerts.severities.map((s) => ({
                  label: `${s}: ${formatInteger(d.alerts.openBySeverity[s] ?? 0)} open`,
                  color: severityColor(s),
                  href: dashboardLinks.openAlertsOfSeverity(s),
                }))}
              />
            </>
          )}
        </ChartCard>

        <ChartCard
          id="stale-writes"
          title="Stale-write conflicts per minute, last 60 minutes"
          summary={describeConflicts(d)}
          more={{ href: dashboardLinks.staleWrites, label: "Stale-write alerts" }}
        >
          {conflictsTotal === 0 ? (
            <Empty>No write was refused as stale in the last hour.</Empty>
          ) : (
            <>
              <PerMinuteChart
                data={d.conflictsPerMinute}
                series={[
                  { key: "version", name: "Outdated version", color: ink.version },
                  { key: "fencing", name: "Outdated fencing token", color: ink.fencing },
                ]}
                onClickHref={dashboardLinks.staleWrites}
              />
              <SwatchLegend
                items={[
                  { label: "Outdated version", color: ink.version, href: dashboardLinks.staleWrites },
                  { label: "Outdated fencing token", color: ink.fencing, href: dashboardLinks.staleWrites },
                ]}
              />
            </>
          )}
        </ChartCard>

        <ChartCard id="budget" title="Budget spent, by workflow" summary={describeBudget(d)} wide>
          {d.budget.length === 0 ? (
            <Empty>No tasks, so nothing spent.</Empty>
          ) : (
            <>
              {d.budget.some((b) => b.usdSpent > 0) ? <BudgetChart data={d.budget} /> : null}
              <div className="table-wrap dash-table">
                <table className="table table--compact">
                  <caption className="visually-hidden">Budget spent by workflow</caption>
                  <thead>
                    <tr>
                      <th scope="col">Workflow</th>
                      <th scope="col" className="num">
                        Tasks
                      </th>
                      <th scope="col" className="num">
                        USD spent
                      </th>
                      <th scope="col" className="num col-p2">
                        USD committed
                      </th>
                      <th scope="col" className="num col-p2">
                        Tokens spent
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.budget.map((b) => (
                      <tr key={b.workflow}>
                        <th scope="row">
                          <Link href={dashboardLinks.tasksOfWorkflow(b.workflow)}>{b.workflow}</Link>
                        </th>
                        <td className="num">{formatInteger(b.tasks)}</td>
                        <td className="num">{formatUsdShort(b.usdSpent)}</td>
                        <td className="num col-p2">{formatUsdShort(b.usdCommitted)}</td>
                        <td className="num col-p2">{formatInteger(b.tokensSpent)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          )}
        </ChartCard>
      </div>
    </>
  );
}

function LiveStatus({
  error,
  updatedAt,
  stream,
  refreshedBy,
}: {
  error: Error | null;
  updatedAt: string;
  stream: StreamStatus;
  refreshedBy: "stream" | "poll" | null;
}) {
  const time = updatedAt.slice(11, 19);
  if (stream === "ended" || (error instanceof ConsoleRouteError && error.sessionEnded))
    return (
      <p className="live live--off" role="status">
        <span className="live__dot" aria-hidden="true" />
        Live updates stopped: your session ended. Reload to sign in again.
      </p>
    );
  if (error)
    return (
      <p className="live live--off" role="status">
        <span className="live__dot" aria-hidden="true" />
        {/* A refusal says why in its problem's detail; a failed fetch only that the server did not answer. */}
        Live updates paused: {error instanceof ConsoleRouteError ? error.message : "the server cannot be reached."}{" "}
        Showing {time} UTC.
      </p>
    );
  const polling = isPolling(stream);
  const mode = stream === "off" ? "Polling (live updates are off)" : polling ? "Live (polling)" : "Live";
  return (
    <p
      className="live live--on"
      role="status"
      data-live-mode={polling ? "polling" : stream === "live" ? "stream" : "connecting"}
      data-refreshed-by={refreshedBy ?? undefined}
      title={
        polling
          ? `Reads the numbers every ${pollMs / 1000} seconds ${stream === "off" ? "(this deployment has turned live updates off)" : "until live updates reconnect"}`
          : "Reads the numbers again as soon as something they count changes"
      }
    >
      <span className="live__dot" aria-hidden="true" />
      {mode} · as of {time} UTC
    </p>
  );
}

function Headline({
  href,
  value,
  label,
  tone,
  note,
}: {
  href: string;
  value: number;
  label: string;
  tone: "calm" | "warning" | "danger";
  note?: string;
}) {
  return (
    <Link
      href={href}
      className={`dash-headline__item dash-headline__item--${tone}`}
      data-testid={`headline-${label.replace(/[^a-z]+/g, "-")}`}
    >
      <span className="dash-headline__value">{formatInteger(value)}</span>
      <span className="dash-headline__label">{label}</span>
      {note ? <span className="dash-headline__note">{note}</span> : null}
    </Link>
  );
}

function ChartCard({
  id,
  title,
  summary,
  children,
  more,
  wide,
}: {
  id: string;
  title: string;
  summary: string;
  children: ReactNode;
  more?: { href: string; label: string };
  wide?: boolean;
}) {
  return (
    <section
      className={`card dash-card${wide ? " dash-card--wide" : ""}`}
      aria-labelledby={`${id}-title`}
      data-testid={`chart-${id}`}
    >
      <h2 id={`${id}-title`} className="dash-card__title">
        {title}
      </h2>
      <p className="dash-card__summary">{summary}</p>
      {children}
      {more ? (
        <p className="dash-card__more">
          <Link href={more.href}>{more.label} →</Link>
        </p>
      ) : null}
    </section>
  );
}

function Empty({ children }: { children: ReactNode }) {
  return <p className="dash-empty">{children}</p>;
}

function SwatchLegend({ items }: { items: Array<{ label: string; color: string; href: string }> }) {
  if (items.length === 0) return null;
  return (
    <ul className="dash-legend" aria-label="Legend">
      {items.map((item) => (
        <li key={item.label}>
          <Link href={item.href}>
            <span className="dash-legend__swatch" style={{ background: item.color }} aria-hidden="true" />
            {item.label}
          </Link>
        </li>
      ))}
    </ul>
  );
}
