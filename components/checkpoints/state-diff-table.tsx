import type { StateDiffEntry } from "@/lib/model/checkpoints/checkpoint-reports";
import { formatDiffValue } from "@/lib/adapters/console/checkpoints/checkpoints-format";

const kindWords: Record<StateDiffEntry["kind"], string> = { added: "added", removed: "removed", changed: "changed" };

/**
 * A state diff, field by field: what one side has, what the other has. Long
 * values are cut in the cell and whole on hover.
 */
export function StateDiffTable({
  entries,
  beforeLabel,
  afterLabel,
  caption,
}: {
  entries: StateDiffEntry[];
  beforeLabel: string;
  afterLabel: string;
  caption: string;
}) {
  return (
    <div className="table-wrap">
      <table className="table table--compact ckpt-diff">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">{beforeLabel}</th>
            <th scope="col">{afterLabel}</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.path} className={`ckpt-diff__row ckpt-diff__row--${entry.kind}`}>
              <th scope="row" className="mono">
                {entry.path}
                <span className="visually-hidden"> ({kindWords[entry.kind]})</span>
              </th>
              <td
                className="mono ckpt-diff__before"
                title={entry.before === undefined ? undefined : JSON.stringify(entry.before)}
              >
                {formatDiffValue(entry.before)}
              </td>
              <td
                className="mono ckpt-diff__after"
                title={entry.after === undefined ? undefined : JSON.stringify(entry.after)}
              >
                {formatDiffValue(entry.after)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The same diff stacked, field above its two values, for a narrow column (the restore panel). */
export function StateDiffList({
  entries,
  beforeLabel,
  afterLabel,
}: {
  entries: StateDiffEntry[];
  beforeLabel: string;
  afterLabel: string;
}) {
  return (
    <dl className="ckpt-diff-list">
      {entries.map((entry) => (
        <div key={entry.path} className={`ckpt-diff-list__item ckpt-diff__row--${entry.kind}`}>
          <dt className="mono">
            {entry.path} <span className="ckpt-diff-list__kind">{kindWords[entry.kind]}</span>
          </dt>
          <dd
            className="mono ckpt-diff__before"
            title={entry.before === undefined ? undefined : JSON.stringify(entry.before)}
          >
            <span className="ckpt-diff-list__label">{beforeLabel}</span> {formatDiffValue(entry.before, 90)}
          </dd>
          <dd
            className="mono ckpt-diff__after"
            title={entry.after === undefined ? undefined : JSON.stringify(entry.after)}
          >
            <span className="ckpt-diff-list__label">{afterLabel}</span> {formatDiffValue(entry.after, 90)}
          </dd>
        </div>
      ))}
    </dl>
  );
}
