import Link from "next/link";
import type { ExecutionDetailData } from "@/lib/adapters/console/executions/execution-detail";
import {
  decisionInfo,
  executionStatusInfo,
  reviewStatusInfo,
  summarizeEvidence,
} from "@/lib/adapters/console/reviews/reviews-format";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { AlertStatusBadge, SeverityBadge } from "@/components/alerts/severity-badge";
import { CopyButton } from "@/components/copy-button";
import { DetailPageHeader, Fact } from "@/components/detail-page-header";
import { Identity } from "@/components/identity";
import { RelativeTime } from "@/components/relative-time";
import { StatusBadge } from "@/components/status-badge";
import { ExecutionCallFacts } from "@/components/task/execution-call-facts";
import { ExecutionEvents } from "@/components/task/execution-events";
import { JsonBlock } from "@/components/task/execution-evidence";
import { MaskedFieldsNotice } from "@/components/masked-fields-notice";
import { ExecutionStatusBadge } from "@/components/task/execution-status-badge";
import "@/components/executions/executions.css";

/**
 * One external call: what was asked, what came back and the provider's
 * evidence, every status it passed through, the review that held it, the
 * alerts raised over it, and its task. Read-only: decisions are made on the
 * review and the task, which it links to.
 */
/** On its own page a document is shown whole (long ones are still cut by JsonBlock), never in a scroll box of its own. */
const json = "evidence__json exec-detail__json";

export function ExecutionDetailView({ data }: { data: ExecutionDetailData }) {
  const { execution: x, events, review, alerts, task } = data;
  const taskHref = `/tasks/${encodeURIComponent(x.taskId)}`;
  return (
    <>
      <DetailPageHeader
        parent={{ href: "/executions", label: "Executions" }}
        id={x.id}
        title={
          <div className="with-copy">
            <h1 className="task-title">
              <span className="visually-hidden">Execution </span>
              <span className="mono">{x.id}</span>
            </h1>
            <CopyButton value={x.id} what="execution id" />
          </div>
        }
        status={<ExecutionStatusBadge status={x.status} />}
        version={x.version}
        versionHint="Every status change increments the execution's version"
        live={null}
      >
        <Fact term="Tool">
          <span className="mono">{x.tool}</span>
          {x.toolVersion ? <span className="subtle"> v{x.toolVersion}</span> : null}
          {x.irreversible ? <span className="tag tag--danger">irreversible</span> : null}
        </Fact>
        <Fact term="Task">
          <Link href={taskHref} className="mono">
            {x.taskId}
          </Link>
        </Fact>
        <Fact term="Attempt">
          {x.attempt} <span className="mono subtle">{x.attemptId}</span>
        </Fact>
        <Fact term="Recorded">
          <RelativeTime value={x.createdAt} /> by <Identity value={x.createdBy} />
        </Fact>
      </DetailPageHeader>
      <p className="lede exec-detail__meaning">{executionStatusInfo[x.status].meaning}</p>
      <MaskedFieldsNotice fields={data.maskedFields} />

      <div className="detail-grid">
        <div className="detail-main">
          <section className="card" aria-labelledby="call-heading">
            <h2 id="call-heading">Call</h2>
            <dl className="facts facts--grid exec-detail__facts">
              <ExecutionCallFacts execution={x} keyClassName="exec-detail__wide" />
              <div>
                <dt>Tool call</dt>
                <dd>
                  <span className="mono">{x.toolCallId}</span>
                  <CopyButton value={x.toolCallId} what="tool call id" />
                </dd>
              </div>
              <div>
                <dt>Last change</dt>
                <dd>
                  <RelativeTime value={x.updatedAt} />
                </dd>
              </div>
              {x.compensatesId ? (
                <div>
                  <dt>Undoes</dt>
                  <dd>
                    <Link href={`/executions/${encodeURIComponent(x.compensatesId)}`} className="mono">
                      {x.compensatesId}
                    </Link>
                  </dd>
                </div>
              ) : null}
            </dl>
            <h3>Request</h3>
            <JsonBlock value={x.request} className={json} />
            <h3>Result</h3>
            {x.result !== null && x.result !== undefined ? (
              <JsonBlock value={x.result} className={json} />
            ) : (
              <p className="subtle">No result recorded{x.sentAt ? " yet" : ": the call was not sent"}.</p>
            )}
            {x.error ? (
              <p className="notice notice--error">
                Error reported: <span className="mono">{x.error}</span>
              </p>
            ) : null}
            {x.retry ? <p className="hint">{x.retry.reason}</p> : null}
          </section>
          <section className="card" aria-labelledby="evidence-heading">
            <h2 id="evidence-heading">Evidence</h2>
            {x.evidence !== null && x.evidence !== undefined ? (
              <>
                <p className="subtle">{summarizeEvidence(x.evidence)}</p>
                <JsonBlock value={x.evidence} className={json} />
              </>
            ) : (
              <p className="subtle">The provider has given no evidence for this call yet.</p>
            )}
          </section>
          <section className="card" aria-labelledby="events-heading">
            <h2 id="events-heading">Events</h2>
            <ExecutionEvents events={events} />
          </section>
        </div>
        <div className="detail-side">
          <section className="card" aria-labelledby="task-heading">
            <h2 id="task-heading">Task</h2>
            {task ? (
              <dl className="facts">
                <div>
                  <dt>Task</dt>
                  <dd className="with-copy">
                    <Link href={taskHref} className="mono exec-detail__id">
                      {task.id}
                    </Link>
                    <CopyButton value={task.id} what="task id" />
                  </dd>
                </div>
                <div>
                  <dt>Status</dt>
                  <dd>
                    <StatusBadge status={task.status} def={getWorkflowByDigest(task.workflow.digest)} />{" "}
                    <span className="subtle">version {task.version}</span>
                  </dd>
                </div>
                <div>
                  <dt>Workflow</dt>
                  <dd>
                    {task.workflow.name} v{task.workflow.version}
                  </dd>
                </div>
                <div>
                  <dt>Intent</dt>
                  <dd className="mono exec-detail__id">{task.intentId}</dd>
                </div>
              </dl>
            ) : (
              <p className="subtle">
                Task <span className="mono">{x.taskId}</span> no longer exists.
              </p>
            )}
          </section>
          <section className="card" aria-labelledby="review-heading">
            <h2 id="review-heading">Review</h2>
            {review ? (
              <>
                <p>
                  <Link href={`/reviews/${encodeURIComponent(review.id)}`}>
                    {review.status === "OPEN" ? "Open review" : `Review: ${reviewStatusInfo[review.status].label}`}
                  </Link>
                  {review.round > 1 ? <span className="subtle"> · round {review.round}</span> : null}
                </p>
                {review.decisions.length ? (
                  <ol className="exec-detail__decisions">
                    {review.decisions.map((d, i) => (
                      <li key={i}>
                        <Identity value={d.actor} /> {decisionInfo[d.kind].past} <RelativeTime value={d.createdAt} />
                      </li>
                    ))}
                  </ol>
                ) : (
                  <p className="subtle">No decision yet.</p>
                )}
              </>
            ) : (
              <p className="subtle">This call was never frozen for review.</p>
            )}
          </section>
          {alerts.length ? (
            <section className="card" aria-labelledby="alerts-heading">
              <h2 id="alerts-heading">Divergence alerts</h2>
              <ul className="exec-detail__alerts">
                {alerts.map((a) => (
                  <li key={a.id}>
                    <SeverityBadge severity={a.severity} />{" "}
                    <Link href={`/alerts/${encodeURIComponent(a.id)}`}>{a.kind}</Link>{" "}
                    <AlertStatusBadge status={a.status} /> <RelativeTime value={a.createdAt} />
                    <p className="subtle">{a.message}</p>
                  </li>
                ))}
              </ul>
            </section>
          ) : null}
        </div>
      </div>
    </>
  );
}
