import Link from "next/link";
import type { Principal } from "@/lib/model/permissions";
import { can } from "@/lib/model/permissions";
import { reviewStatusInfo, summarizeEvidence } from "@/lib/adapters/console/reviews/reviews-format";
import type { ExternalEffects, LedgerEntry } from "@/lib/adapters/console/reviews/reviews-ledger";
import { ExecutionEvents } from "@/components/task/execution-events";
import { EvidenceDetails } from "@/components/task/execution-evidence";
import { ExecutionStatusBadge } from "@/components/task/execution-status-badge";
import { DivergenceAlerts } from "@/components/task/divergence-alerts";
import { ExecutionCallFacts } from "@/components/task/execution-call-facts";

/**
 * What this task did to the outside world: one entry per logical tool call
 * (the write-ahead ledger), the provider's evidence, and where a frozen call
 * waits for people. Open divergence alerts come first: while one is open,
 * nothing irreversible proceeds on the task.
 */
export function ExecutionLedger({
  effects,
  principal,
  taskId,
}: {
  effects: ExternalEffects;
  principal: Principal;
  taskId: string;
}) {
  const { entries, openAlerts, resolvedAlerts } = effects;
  const frozen = entries.filter((e) => e.execution.status === "NEEDS_HUMAN").length;
  const unknown = entries.filter(
    (e) => e.execution.status === "OUTCOME_UNKNOWN" || e.execution.status === "SENT",
  ).length;
  return (
    <section className="card ledger-card" aria-labelledby="effects-heading">
      <div className="card-heading-row">
        <h2 id="effects-heading">External effects</h2>
        <p className="ledger-card__summary">
          {entries.length === 0
            ? "No tool calls recorded."
            : [
                `${entries.length} call${entries.length === 1 ? "" : "s"}`,
                frozen ? `${frozen} frozen for review` : null,
                unknown ? `${unknown} with an outcome not yet known` : null,
                openAlerts.length
                  ? `${openAlerts.length} open divergence alert${openAlerts.length === 1 ? "" : "s"}`
                  : null,
              ]
                .filter(Boolean)
                .join(" · ")}
        </p>
      </div>
      <DivergenceAlerts
        open={openAlerts}
        resolved={resolvedAlerts}
        canResolve={can(principal, "tasks:transition")}
        role={principal.role}
        taskId={taskId}
      />
      {entries.length === 0 ? (
        <p className="subtle">
          This task has not called any external tool. Calls appear here the moment their intent is recorded, before
          anything is sent.
        </p>
      ) : (
        <ol className="ledger">
          {entries.map((entry) => (
            <LedgerItem key={entry.execution.id} entry={entry} />
          ))}
        </ol>
      )}
    </section>
  );
}

function LedgerItem({ entry }: { entry: LedgerEntry }) {
  const x = entry.execution;
  const evidenceSummary = summarizeEvidence(x.evidence);
  return (
    <li className={`ledger__item ledger__item--${x.status.toLowerCase().replace(/_/g, "-")}`}>
      <div className="ledger__head">
        <span className="mono ledger__tool">{x.tool}</span>
        {x.irreversible ? <span className="tag tag--danger">irreversible</span> : null}
        <span className="subtle mono ledger__call" title="Tool call id: stable across retries and crashes">
          {x.toolCallId}
        </span>
        <Link href={`/executions/${encodeURIComponent(x.id)}`} className="mono ledger__exec">
          {x.id}
        </Link>
        <ExecutionStatusBadge status={x.status} explain />
        {entry.review ? (
          <Link
            href={`/reviews/${encodeURIComponent(entry.review.id)}`}
            className="button button--small ledger__review"
          >
            {entry.review.status === "OPEN"
              ? "Open review"
              : `Review: ${reviewStatusInfo[entry.review.status].label.toLowerCase()}`}
            <span className="visually-hidden">
              {" "}
              of {x.tool} {x.toolCallId}
            </span>
          </Link>
        ) : null}
      </div>
      <dl className="ledger__facts">
        <div>
          <dt>Attempt</dt>
          <dd>
            {x.attempt} <span className="mono subtle">{x.attemptId}</span>
          </dd>
        </div>
        <ExecutionCallFacts execution={x} keyClassName="ledger__key" />
      </dl>
      <div className="ledger__evidence">
        {x.evidence !== null && x.evidence !== undefined ? (
          <EvidenceDetails evidence={x.evidence} summary={evidenceSummary} />
        ) : (
          <p className="subtle ledger__no-evidence">
            {x.error ? `No evidence. Error: ${x.error}` : "No evidence recorded yet."}
          </p>
        )}
        {entry.events.length ? (
          <details className="ledger__history">
            <summary>
              History ({entry.events.length} event{entry.events.length === 1 ? "" : "s"})
            </summary>
            <ExecutionEvents events={entry.events} />
          </details>
        ) : null}
      </div>
    </li>
  );
}
