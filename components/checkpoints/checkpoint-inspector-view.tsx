import Link from "next/link";
import type { Principal } from "@/lib/model/permissions";
import { MaskedFieldsNotice } from "@/components/masked-fields-notice";
import { can } from "@/lib/model/permissions";
import type { RestorePlan } from "@/lib/model/checkpoints/restore-plan";
import type { CheckpointInspectorData } from "@/lib/adapters/console/checkpoints/checkpoints";
import {
  describeTrigger,
  prettyJson,
  taskCheckpointsHref,
} from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { formatInteger, formatUsd, pluralize, shortDigest } from "@/lib/adapters/console/shared/format";
import { usesGates } from "@/lib/adapters/console/shared/status";
import { RelativeTime } from "@/components/relative-time";
import { Identity } from "@/components/identity";
import { LiveRefresh } from "@/components/live-refresh";
import { StatusBadge } from "@/components/status-badge";
import { ExecutionStatusBadge } from "@/components/task/execution-status-badge";
import { AgentsCard, ArtifactsCard, BudgetCard, GatesCard, SubtasksCard } from "@/components/task/task-facts";
import { DetailPageHeader, Fact } from "@/components/detail-page-header";
import { IntegrityBadge } from "@/components/checkpoints/integrity-badge";
import { IntegrityCard } from "@/components/checkpoints/integrity-card";
import { RestoreHistory } from "@/components/checkpoints/restore-history";
import { RestorePanel } from "@/components/checkpoints/restore-panel";
import { RestorePlanView } from "@/components/checkpoints/restore-plan-view";
import { StateDiffTable } from "@/components/checkpoints/state-diff-table";
import { TableWrap } from "@/components/table-wrap";
import { TruncatedText } from "@/components/truncated-text";
import "@/components/checkpoints/checkpoints.css";
import { CopyButton } from "@/components/copy-button";

/**
 * `/checkpoints/[id]`: everything a checkpoint holds and whether it can be
 * trusted, how it differs from the task now, and restoring it. `readOnlyPlan`
 * is what a restore would do, computed for people who may not restore.
 */
export function CheckpointInspectorView({
  data,
  principal,
  readOnlyPlan,
}: {
  data: CheckpointInspectorData;
  principal: Principal;
  /** The plan masked for this reader, and where. */
  readOnlyPlan: { value: RestorePlan; maskedFields: string[] } | null;
}) {
  const { detail, def, verdict } = data;
  const { summary, document, task } = detail;
  const taskHref = `/tasks/${encodeURIComponent(task.id)}`;
  const trigger = describeTrigger(summary.trigger);
  const age = task.version - summary.stateVersion;
  // A terminal task is refused by every restore plan ("terminal"): offering to plan one would only lead there.
  const taskEnded = def?.states[task.status]?.terminal === true;
  return (
    <>
      <DetailPageHeader
        parent={{ href: taskCheckpointsHref(task.id), label: `Checkpoints of ${task.id}` }}
        id={summary.id}
        title={<h1 className="ckpt-title">Checkpoint of version {summary.stateVersion}</h1>}
        status={
          <>
            <IntegrityBadge verdict={verdict} />
            {summary.snapshotStatus ? <StatusBadge status={summary.snapshotStatus} def={def} /> : null}
          </>
        }
        version={task.version}
        versionHint="The task's version now: a restore writes the next one"
        live={
          <LiveRefresh
            url={`/api/console${taskCheckpointsHref(task.id)}`}
            token={data.token}
            topic={{ kinds: ["task", "checkpoint"], about: task.id }}
            what="checkpoint"
          />
        }
      >
        <Fact term="Task">
          <Link href={taskHref} className="mono">
            {task.id}
          </Link>{" "}
          <StatusBadge status={task.status} def={def} />
        </Fact>
        <Fact term="Why">
          <span title={trigger.description}>{trigger.label}</span>
        </Fact>
        <Fact term="Taken">
          <RelativeTime value={summary.createdAt} /> by <Identity value={summary.createdBy} />
        </Fact>
        <Fact term="Freshness">
          {age === 0
            ? "Of the task's current version"
            : age > 0
              ? `${pluralize(age, "version")} behind the task`
              : `${pluralize(-age, "version")} ahead of the task`}
        </Fact>
      </DetailPageHeader>
      <MaskedFieldsNotice fields={data.maskedFields} />

      <div className="detail-grid ckpt-grid">
        <div className="detail-main">
          <IntegrityCard
            checkpointId={summary.id}
            report={detail.integrity}
            keyId={summary.keyId}
            keyKnown={data.keyKnown}
            snapshotDigest={summary.snapshotDigest}
            signature={document?.integrity.signature ?? "(unreadable)"}
            schemaVersion={summary.schemaVersion}
          />
          <section className="card" aria-labelledby="diff-heading">
            <h2 id="diff-heading">Against the task now</h2>
            {!document ? (
              <p className="notice notice--error">The snapshot cannot be read, so it cannot be compared.</p>
            ) : detail.diffToCurrent.length === 0 ? (
              <p className="subtle">
                The snapshot equals the task&apos;s current state
                {age === 0 ? "" : " in every field (only the version and time moved)"}.
              </p>
            ) : (
              <>
                <p className="hint">
                  {pluralize(detail.diffToCurrent.length, "field")} differ between the checkpoint (version{" "}
                  {summary.stateVersion}) and the task now (version {task.version}, {task.status}).
                </p>
                <StateDiffTable
                  entries={detail.diffToCurrent}
                  beforeLabel={`Checkpoint (v${summary.stateVersion})`}
                  afterLabel={`Now (v${task.version})`}
                  caption="Differences between the checkpoint's snapshot and the task's current state"
                />
              </>
            )}
          </section>
        </div>
        <div className="detail-side">
          {taskEnded ? (
            <section className="card card--quiet ckpt-restore" aria-labelledby="restore-heading">
              <h2 id="restore-heading">Restore</h2>
              <p className="notice notice--info" role="note">
                The task has ended ({task.status}). A finished task never re-enters execution, so none of its
                checkpoints can be restored onto it; start a new task to carry the work on.
              </p>
            </section>
          ) : can(principal, "checkpoints:restore") ? (
            <RestorePanel
              key={summary.id}
              checkpointId={summary.id}
              checkpointVersion={summary.stateVersion}
              taskId={task.id}
              taskVersion={task.version}
            />
          ) : (
            <section className="card card--quiet ckpt-restore" aria-labelledby="restore-heading">
              <h2 id="restore-heading">Restore</h2>
              <p className="notice notice--info" role="note">
                Restoring is for engineers. Your role (<strong>{principal.role}</strong>) can inspect checkpoints and
                see what a restore would do, but not restore one: that needs the checkpoints:restore permission.
              </p>
              {readOnlyPlan ? (
                <>
                  <h3>What a restore would do now</h3>
                  <RestorePlanView plan={readOnlyPlan.value} maskedFields={readOnlyPlan.maskedFields} />
                </>
              ) : null}
            </section>
          )}
          <RestoreHistory restores={data.restores} showCheckpoint={false} title="Restores of this checkpoint" compact />
        </div>
      </div>

      {document ? (
        <>
          <section className="card" aria-labelledby="snapshot-heading">
            <div className="card-heading-row">
              <h2 id="snapshot-heading">Snapshot</h2>
              <p className="subtle">
                TaskState of version {document.state_snapshot.version}, {document.state_snapshot.status} ·{" "}
                <span className="mono ckpt-uri" title={document.state_snapshot_uri}>
                  {document.state_snapshot_uri}
                </span>
              </p>
            </div>
            <div className="facts-grid ckpt-snapshot-facts">
              <SubtasksCard state={document.state_snapshot} />
              <BudgetCard state={document.state_snapshot} />
              <AgentsCard state={document.state_snapshot} />
              {def && usesGates(def) ? <GatesCard state={document.state_snapshot} /> : null}
              <ArtifactsCard state={document.state_snapshot} />
            </div>
            <details className="ckpt-json" open>
              <summary>The snapshot as stored (JSON)</summary>
              <pre className="evidence__json ckpt-json__pre" tabIndex={0} aria-label="Snapshot JSON">
                {prettyJson(document.state_snapshot)}
              </pre>
            </details>
            <details className="ckpt-json">
              <summary>The whole checkpoint document (JSON)</summary>
              <pre className="evidence__json ckpt-json__pre" tabIndex={0} aria-label="Checkpoint document JSON">
                {prettyJson(document)}
              </pre>
            </details>
          </section>

          <div className="ckpt-facts-grid">
            <section className="card" aria-labelledby="provenance-heading">
              <h2 id="provenance-heading">Provenance</h2>
              <dl className="facts">
                <div>
                  <dt>Last message</dt>
                  <dd className="mono">
                    {document.provenance.last_message_id || (
                      <span className="subtle">none: no message in or out yet</span>
                    )}
                  </dd>
                </div>
                <div>
                  <dt>Delegation hash</dt>
                  <dd
                    className="mono ckpt-hex"
                    title="sha256 of the intent, the creator, the active agents and the lease holder"
                  >
                    {document.provenance.delegation_hash}
                    <CopyButton value={document.provenance.delegation_hash} what="delegation hash" />
                  </dd>
                </div>
                <div>
                  <dt>Policy version</dt>
                  <dd>
                    <span className="mono">{document.provenance.policy_version}</span>{" "}
                    <span className="subtle">
                      {document.provenance.policy_version === data.currentPolicyVersion
                        ? "· the policy in force now"
                        : `· now ${data.currentPolicyVersion}`}
                    </span>
                  </dd>
                </div>
                <div>
                  <dt>Workflow definition</dt>
                  <dd>
                    {def ? `${def.name} v${def.version} ` : "unknown here "}
                    <span className="mono subtle" title={document.workflow_definition_digest}>
                      {shortDigest(document.workflow_definition_digest)}
                    </span>
                  </dd>
                </div>
                <div>
                  <dt>Input digest</dt>
                  <dd className="mono ckpt-hex">
                    {document.input_digest}
                    <CopyButton value={document.input_digest} what="input digest" />
                  </dd>
                </div>
                <div>
                  <dt>Output digest</dt>
                  <dd className="mono ckpt-hex">
                    {document.output_digest ? (
                      <>
                        {document.output_digest}
                        <CopyButton value={document.output_digest} what="output digest" />
                      </>
                    ) : (
                      <span className="subtle">none: no artifacts yet</span>
                    )}
                  </dd>
                </div>
                <div>
                  <dt>Budget consumed</dt>
                  <dd>
                    {formatUsd(document.budget_consumed.currency_usd)} ·{" "}
                    {formatInteger(document.budget_consumed.tokens)} tokens ·{" "}
                    {formatInteger(document.budget_consumed.hops)} hops
                  </dd>
                </div>
                <div>
                  <dt>Redacted before signing</dt>
                  <dd>
                    {document.redactions.length === 0 ? (
                      <span className="subtle">nothing: no secret or raw reasoning was found</span>
                    ) : (
                      <ul className="ckpt-plain-list">
                        {document.redactions.map((r) => (
                          <li key={r.path}>
                            <span className="mono">{r.path}</span> <span className="tag">{r.kind}</span>
                          </li>
                        ))}
                      </ul>
                    )}
                  </dd>
                </div>
              </dl>
            </section>

            <section className="card" aria-labelledby="pending-heading">
              <h2 id="pending-heading">Pending work</h2>
              {document.pending_work.length === 0 ? (
                <p className="subtle">Nothing was pending: no lease, no active agent, no undelivered message.</p>
              ) : (
                <TableWrap label="Pending work">
                  <table className="table table--compact ckpt-pending">
                    <caption className="visually-hidden">Work pending when the checkpoint was taken</caption>
                    <thead>
                      <tr>
                        <th scope="col">Agent</th>
                        <th scope="col">Lease or message</th>
                      </tr>
                    </thead>
                    <tbody>
                      {document.pending_work.map((w, i) => (
                        <tr key={`${w.agent_id}-${w.lease_id ?? ""}-${w.message_id ?? ""}-${i}`}>
                          <th scope="row">
                            <Identity value={w.agent_id} />
                          </th>
                          <td>
                            {w.lease_id ? (
                              <>
                                <span className="ckpt-pending__kind">lease</span>
                                <TruncatedText value={w.lease_id} className="mono" />
                              </>
                            ) : w.message_id ? (
                              <>
                                <span className="ckpt-pending__kind">message</span>
                                <TruncatedText value={w.message_id} className="mono" />
                              </>
                            ) : (
                              <span className="subtle">active agent</span>
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
              )}
              <p className="hint">
                A restore never hands a lease back: the holder at restore time is fenced, and a worker acquires a new
                one.
              </p>
            </section>

            <section className="card" aria-labelledby="receipts-heading">
              <h2 id="receipts-heading">Tool receipts</h2>
              {data.receipts.length === 0 ? (
                <p className="subtle">None: no side effect had succeeded when it was taken.</p>
              ) : (
                <ul className="ckpt-receipts">
                  {data.receipts.map(({ id, execution }) => (
                    <li key={id}>
                      <span className="mono">{id}</span>
                      {execution ? (
                        <>
                          {" "}
                          <span className="mono">{execution.tool}</span>{" "}
                          <ExecutionStatusBadge status={execution.status} />
                          <span className="ckpt-effects__key">
                            key <span className="key">{execution.idempotencyKey}</span>
                          </span>
                        </>
                      ) : (
                        <span className="subtle"> · not in the ledger any more</span>
                      )}
                    </li>
                  ))}
                </ul>
              )}
              <p className="hint">
                Proof these effects already ran: resuming returns their recorded results instead of calling the tools
                again.
              </p>
            </section>
          </div>
        </>
      ) : (
        <section className="card" aria-labelledby="snapshot-heading">
          <h2 id="snapshot-heading">Snapshot</h2>
          <p className="notice notice--error" role="alert">
            The stored payload cannot be read as a checkpoint ({verdict.reason}). Its snapshot, provenance, pending work
            and receipts are not shown: nothing from it can be trusted.
          </p>
        </section>
      )}
    </>
  );
}
