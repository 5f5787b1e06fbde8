import Link from "next/link";
import type { CheckpointRow } from "@/lib/adapters/console/checkpoints/checkpoints";
import { checkpointHref } from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { RelativeTime } from "@/components/relative-time";
import { Identity } from "@/components/identity";
import { IntegrityBadge } from "@/components/checkpoints/integrity-badge";
import { TriggerLabel } from "@/components/checkpoints/trigger-label";

/**
 * Every checkpoint of the task, newest first: the keyboard's and the screen
 * reader's way through the timeline. The first cell links to the inspector;
 * a long list scrolls inside its own focusable region.
 */
export function CheckpointTable({ rows, currentVersion }: { rows: CheckpointRow[]; currentVersion: number }) {
  return (
    <div className="table-wrap ckpt-table-wrap" tabIndex={0} role="region" aria-label="Checkpoints, newest first">
      <table className="table table--compact ckpt-table">
        <caption className="visually-hidden">
          Checkpoints of this task, newest first: version, why it was taken, when and by whom, integrity
        </caption>
        <thead>
          <tr>
            <th scope="col">Checkpoint</th>
            <th scope="col">Why</th>
            <th scope="col">Taken</th>
            <th scope="col">Integrity</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ summary, verdict }) => (
            <tr key={summary.id} data-checkpoint-id={summary.id}>
              <th scope="row">
                <Link href={checkpointHref(summary.id)} className="ckpt-table__link">
                  version {summary.stateVersion}
                </Link>
                <span className="ckpt-table__sub mono" title={summary.id}>
                  {summary.snapshotStatus ?? "unreadable"}
                  {summary.stateVersion === currentVersion ? " · current" : ""}
                </span>
              </th>
              <td>
                <TriggerLabel trigger={summary.trigger} />
              </td>
              <td>
                <RelativeTime value={summary.createdAt} />
                <span className="ckpt-table__sub">
                  by <Identity value={summary.createdBy} />
                </span>
              </td>
              <td>
                <IntegrityBadge verdict={verdict} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
