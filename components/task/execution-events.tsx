import type { ExecutionEventView } from "@/lib/adapters/console/reviews/reviews-view";
import { summarizeEvidence } from "@/lib/adapters/console/reviews/reviews-format";
import { RelativeTime } from "@/components/relative-time";
import { Identity } from "@/components/identity";
import { ExecutionStatusBadge } from "@/components/task/execution-status-badge";
import { EvidenceDetails } from "@/components/task/execution-evidence";

/** An execution's history, oldest first: each status it passed through, who moved it, why, and what the provider said. */
export function ExecutionEvents({ events }: { events: ExecutionEventView[] }) {
  if (events.length === 0) return <p className="subtle">No history recorded.</p>;
  return (
    <ol className="exec-events">
      {events.map((e) => (
        <li key={e.id} className="exec-events__item">
          <p className="exec-events__change">
            {e.fromStatus ? (
              <>
                <ExecutionStatusBadge status={e.fromStatus} /> <span aria-label="to">→</span>{" "}
              </>
            ) : (
              <span className="subtle">Recorded as </span>
            )}
            <ExecutionStatusBadge status={e.toStatus} />
          </p>
          <p className="exec-events__meta">
            <Identity value={e.actor} /> · <RelativeTime value={e.createdAt} /> · attempt{" "}
            <span className="mono">{e.attemptId}</span>
          </p>
          {e.reason ? <p className="exec-events__reason">{e.reason}</p> : null}
          {e.evidence !== null && e.evidence !== undefined ? (
            <EvidenceDetails evidence={e.evidence} summary={summarizeEvidence(e.evidence)} />
          ) : null}
        </li>
      ))}
    </ol>
  );
}
