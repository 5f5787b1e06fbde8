import Link from "next/link";
import type { Principal } from "@/lib/model/permissions";
import { MaskedFieldsNotice } from "@/components/masked-fields-notice";
import { can } from "@/lib/model/permissions";
import { checkpointTriggers } from "@/lib/model/checkpoints/checkpoint-schema";
import type { TaskCheckpointsData } from "@/lib/adapters/console/checkpoints/checkpoints";
import {
  describeTrigger,
  integrityStatuses,
  integrityStatusInfo,
  taskCheckpointsHref,
} from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { pluralize } from "@/lib/adapters/console/shared/format";
import { EmptyState } from "@/components/empty-state";
import { LiveRefresh } from "@/components/live-refresh";
import { StatusBadge } from "@/components/status-badge";
import { CheckpointTable } from "@/components/checkpoints/checkpoint-table";
import { CheckpointTimelineChart, TimelineLegend } from "@/components/checkpoints/checkpoint-timeline-chart";
import { DetailPageHeader, Fact } from "@/components/detail-page-header";
import { RestoreHistory } from "@/components/checkpoints/restore-history";
import { TakeCheckpointPanel } from "@/components/checkpoints/take-checkpoint-panel";
import "@/components/checkpoints/checkpoints.css";

/** `/tasks/[id]/checkpoints`: the timeline, the list beside it, taking one on demand, and every restore attempt. */
export function TaskCheckpointsView({
  data,
  principal,
  checkpointId,
}: {
  data: TaskCheckpointsData;
  principal: Principal;
  checkpointId: string;
}) {
  const { task, def, checkpoints, timeline } = data;
  const taskHref = `/tasks/${encodeURIComponent(task.id)}`;
  const counts = integrityStatuses
    .map((s) => [s, checkpoints.filter((c) => c.verdict.status === s).length] as const)
    .filter(([, n]) => n > 0);
  return (
    <>
      <DetailPageHeader
        parent={{ href: taskHref, label: task.id }}
        id="Checkpoints"
        title={
          <h1 className="ckpt-title">
            Checkpoints <span className="mono ckpt-title__of">of {task.id}</span>
          </h1>
        }
        status={<StatusBadge status={task.status} def={def} />}
        version={task.version}
        versionHint="Every change increments the version; a restore writes a new one"
        live={
          <LiveRefresh
            url={`/api/console${taskCheckpointsHref(task.id)}`}
            token={data.token}
            topic={{ kinds: ["task", "checkpoint"], about: task.id }}
            what="checkpoints"
          />
        }
      >
        <Fact term="Task">
          <Link href={taskHref} className="mono">
            {task.id}
          </Link>
        </Fact>
        <Fact term="Workflow">
          {task.workflow.name} v{task.workflow.version}
        </Fact>
        <Fact term="Restore attempts">
          {data.restores.length === 0
            ? "none"
            : `${data.restores.filter((r) => r.outcome === "applied").length} applied, ${data.restores.filter((r) => r.outcome === "refused").length} refused`}
        </Fact>
      </DetailPageHeader>
      <p className="lede ckpt-lede">
        A checkpoint is a signed snapshot of the task at a validated boundary: the point-in-time truth a worker resumes
        from. Restoring one writes its state as a new version; the history is never rewritten.
      </p>
      <MaskedFieldsNotice fields={data.maskedFields} />
      <section className="card" aria-labelledby="ckpt-timeline-heading">
        <h2 id="ckpt-timeline-heading">Timeline</h2>
        <figure className="ckpt-figure">
          <CheckpointTimelineChart data={timeline} />
          <figcaption>
            <TimelineLegend />
            <p className="visually-hidden">{timeline.summary}</p>
            {data.transitionsTruncated ? (
              <p className="hint">The version line shows the newest transitions only; every checkpoint is shown.</p>
            ) : null}
          </figcaption>
        </figure>
      </section>
      <div className="detail-grid ckpt-grid">
        <section className="card" aria-labelledby="ckpt-list-heading">
          <div className="card-heading-row">
            <h2 id="ckpt-list-heading">
              {checkpoints.length ? pluralize(checkpoints.length, "checkpoint") : "Checkpoints"}
            </h2>
            {counts.length ? (
              <p className="ckpt-counts">
                {counts.map(([s, n]) => (
                  <span key={s} className={`badge badge--${integrityStatusInfo[s].tone}`}>
                    <span aria-hidden="true">{integrityStatusInfo[s].glyph}</span> {n}{" "}
                    {integrityStatusInfo[s].label.toLowerCase()}
                  </span>
                ))}
              </p>
            ) : null}
          </div>
          {checkpoints.length === 0 ? (
            <EmptyState title="No checkpoints yet">
              <p>
                They are taken at gates, before irreversible effects, on cancel, escalation and terminal states, or on
                demand.
              </p>
            </EmptyState>
          ) : (
            <CheckpointTable rows={checkpoints} currentVersion={task.version} />
          )}
        </section>
        <div className="detail-side">
          {can(principal, "checkpoints:create") ? (
            <TakeCheckpointPanel
              key={task.id}
              taskId={task.id}
              version={task.version}
              checkpointId={checkpointId}
              validCheckpointOfVersion={
                data.checkpoints.find((c) => c.summary.stateVersion === task.version && c.verdict.status === "valid")
                  ?.summary.id ?? null
              }
            />
          ) : (
            <section className="card card--quiet" aria-labelledby="ckpt-readonly-heading">
              <h2 id="ckpt-readonly-heading">Read-only</h2>
              <p>
                Your role (<strong>{principal.role}</strong>) can inspect checkpoints but not take one: that needs the
                checkpoints:create permission (engineers, admins and agents).
              </p>
            </section>
          )}
          <section className="card card--quiet" aria-labelledby="ckpt-when-heading">
            <h2 id="ckpt-when-heading">When checkpoints are taken</h2>
            <dl className="ckpt-when">
              {checkpointTriggers.map((trigger) => {
                const { label, description } = describeTrigger(trigger);
                return (
                  <div key={trigger}>
                    <dt>{label}</dt>
                    <dd>{description}</dd>
                  </div>
                );
              })}
            </dl>
            <p className="hint">
              Automatic ones commit in the same transaction as the change that reached the boundary, and never of a
              state that failed validation.
            </p>
          </section>
        </div>
      </div>
      <RestoreHistory restores={data.restores} showCheckpoint />
    </>
  );
}
