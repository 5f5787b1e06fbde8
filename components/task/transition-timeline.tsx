import type { TransitionView } from "@/lib/stores/tasks/task-views";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { summarizePatch } from "@/lib/adapters/console/shared/patch-summary";
import { RelativeTime } from "@/components/relative-time";
import { Identity } from "@/components/identity";
import { StatusBadge } from "@/components/status-badge";

/** Every change of the task, newest first: version, from → to, who (and what kind of actor), why, what changed, when. */
export function TransitionTimeline({
  transitions,
  def,
  truncated,
}: {
  transitions: TransitionView[];
  def: WorkflowDefinition | undefined;
  truncated: boolean;
}) {
  return (
    <section className="card" aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">Timeline</h2>
      {truncated ? (
        <p className="hint">
          Showing the newest {transitions.length} changes; older ones are in the API (GET /api/v1/tasks/…/transitions).
        </p>
      ) : null}
      <ol className="timeline">
        {transitions.map((t) => {
          const patch = summarizePatch(t.patch);
          return (
            <li key={t.id} className="timeline__item">
              <span className="timeline__version" aria-label={`version ${t.toVersion}`}>
                v{t.toVersion}
              </span>
              <div className="timeline__body">
                <p className="timeline__change">
                  {t.fromStatus === null ? (
                    <>
                      Created in <StatusBadge status={t.toStatus} def={def} />
                    </>
                  ) : t.fromStatus === t.toStatus ? (
                    <>
                      Updated in place <StatusBadge status={t.toStatus} def={def} />
                    </>
                  ) : (
                    <>
                      <StatusBadge status={t.fromStatus} def={def} /> <span aria-label="to">→</span>{" "}
                      <StatusBadge status={t.toStatus} def={def} />
                    </>
                  )}
                </p>
                <p className="timeline__meta">
                  <Identity value={t.actor} full /> <span className={`kind kind--${t.actorKind}`}>{t.actorKind}</span> ·{" "}
                  <RelativeTime value={t.createdAt} />
                  {t.fromVersion !== null ? <span className="subtle"> · from version {t.fromVersion}</span> : null}
                </p>
                {t.reason && !(t.fromStatus === null && t.reason === "created") ? (
                  <p className="timeline__reason">“{t.reason}”</p>
                ) : null}
                {patch.length ? (
                  <ul className="timeline__patch" aria-label="Changes">
                    {patch.map((line) => (
                      <li key={line}>{line}</li>
                    ))}
                  </ul>
                ) : null}
              </div>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
