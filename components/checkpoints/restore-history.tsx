import Link from "next/link";
import type { CheckpointRestoreView } from "@/lib/model/checkpoints/restore-plan";
import { checkpointHref, describeRestoreAttempt } from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { RelativeTime } from "@/components/relative-time";
import { Identity } from "@/components/identity";

/**
 * Every restore attempt, applied or refused, newest first: the audit of who
 * tried to put the task back, from which checkpoint, and what came of it.
 * Each row is an anchor, so a restore's answer can link to its own line.
 */
export function RestoreHistory({
  restores,
  showCheckpoint,
  title = "Restore attempts",
  compact = false,
}: {
  restores: CheckpointRestoreView[];
  showCheckpoint: boolean;
  title?: string;
  /** A list instead of a table, for a narrow column. */
  compact?: boolean;
}) {
  return (
    <section className="card" aria-labelledby="restore-history-heading">
      <h2 id="restore-history-heading">{title}</h2>
      {restores.length === 0 ? (
        <p className="subtle">
          None yet. Every attempt is recorded here, refused ones too, with the plan that was shown.
        </p>
      ) : compact ? (
        <ol className="ckpt-attempts">
          {restores.map((r) => (
            <li key={r.id} id={`restore-${r.id}`} className="ckpt-restore-attempt">
              <p>
                <OutcomeBadge restore={r} /> {describeRestoreAttempt(r)}
              </p>
              <p className="ckpt-attempts__meta">
                <RelativeTime value={r.createdAt} /> by <Identity value={r.actor} />
              </p>
              <p className="ckpt-attempts__reason">“{r.reason}”</p>
            </li>
          ))}
        </ol>
      ) : (
        <div className="table-wrap">
          <table className="table table--compact ckpt-restores">
            <caption className="visually-hidden">{title}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                {showCheckpoint ? <th scope="col">Checkpoint</th> : null}
                <th scope="col">Outcome</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {restores.map((r) => (
                <tr key={r.id} id={`restore-${r.id}`} className="ckpt-restore-attempt">
                  <td>
                    <RelativeTime value={r.createdAt} />
                  </td>
                  <td>
                    <Identity value={r.actor} />
                  </td>
                  {showCheckpoint ? (
                    <td>
                      <Link href={checkpointHref(r.checkpointId)}>version {r.plan.checkpoint.stateVersion}</Link>
                    </td>
                  ) : null}
                  <td>
                    <OutcomeBadge restore={r} /> {describeRestoreAttempt(r)}
                  </td>
                  <td className="ckpt-restores__reason">{r.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function OutcomeBadge({ restore }: { restore: Pick<CheckpointRestoreView, "outcome"> }) {
  return (
    <span className={`badge badge--${restore.outcome === "applied" ? "success" : "neutral"}`}>
      {restore.outcome === "applied" ? "✓ applied" : "✗ refused"}
    </span>
  );
}
