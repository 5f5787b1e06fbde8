import type { ExecutionStatus } from "@/lib/model/executions/execution-rules";
import { executionStatusInfo } from "@/lib/adapters/console/reviews/reviews-format";

/**
 * An execution's status as a badge with a mark that does not rely on colour:
 * "?" (still finding out) for OUTCOME_UNKNOWN, "■" (frozen, a person decides)
 * for NEEDS_HUMAN. The meaning is in the title and, with `explain`, beside it.
 */
export function ExecutionStatusBadge({ status, explain = false }: { status: ExecutionStatus; explain?: boolean }) {
  const info = executionStatusInfo[status];
  return (
    <span className="exec-status">
      <span className={`badge exec-badge exec-badge--${info.tone}`} title={`${info.label}: ${info.meaning}`}>
        <span aria-hidden="true" className="exec-badge__glyph">
          {info.glyph}
        </span>{" "}
        {status}
      </span>
      {explain ? (
        <span className="exec-status__meaning">{info.meaning}</span>
      ) : (
        <span className="visually-hidden">: {info.label}</span>
      )}
    </span>
  );
}
