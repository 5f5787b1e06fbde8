import Link from "next/link";
import type { ReactNode } from "react";
import { MaskedFieldsNotice } from "@/components/masked-fields-notice";
import type { PlannedEffect, RestorePlan, RestoreRefusalCode } from "@/lib/model/checkpoints/restore-plan";
import {
  budgetLines,
  checkpointHref,
  describeLease,
  describePolicy,
  describeWorkflow,
  effectGroupInfo,
  effectGroups,
  planHeadline,
  refusalInfo,
} from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { formatUsd } from "@/lib/adapters/console/shared/format";
import { ExecutionStatusBadge } from "@/components/task/execution-status-badge";
import { StateDiffList } from "@/components/checkpoints/state-diff-table";
import { TableWrap } from "@/components/table-wrap";

/** Refusals about the checkpoint itself are errors; the rest are about the task's moment, and may pass later. */
const refusedForGood: readonly RestoreRefusalCode[] = ["corrupt", "incompatible", "invalid_state", "terminal"];

/**
 * A restore plan as a person reads it before confirming: the verdict (and
 * for a corrupt checkpoint, where to fall back), what resuming does with
 * each side effect, what is re-authorized rather than taken from the
 * checkpoint, what happens to the lease, and what the task would look like.
 * Presentational only: the engineers' panel and the read-only view both use it.
 */
export function RestorePlanView({
  plan,
  afterVerdict,
  maskedFields = [],
}: {
  plan: RestorePlan;
  afterVerdict?: ReactNode;
  /** Pointers into the plan the server masked for this reader (`/resulting_state/…`, `/diff/…`). */
  maskedFields?: readonly string[];
}) {
  const refusal = plan.refusal;
  const filled = effectGroups.filter((group) => plan.effects[group].length > 0);
  const empty = effectGroups.filter((group) => plan.effects[group].length === 0);
  const tone = plan.allowed
    ? "notice--info"
    : refusal && refusedForGood.includes(refusal.code)
      ? "notice--error"
      : "notice--warning";
  return (
    <div className="ckpt-plan" data-testid="restore-plan">
      <MaskedFieldsNotice fields={maskedFields} />
      <div className={`notice ${tone}`} role={plan.allowed ? "status" : "alert"}>
        <p className="notice__title">{planHeadline(plan)}</p>
        {refusal ? (
          <>
            <p>{refusal.message}</p>
            <p>{refusalInfo[refusal.code].next}</p>
          </>
        ) : (
          <p>
            The task is at version {plan.current.version} ({plan.current.status}); the checkpoint is of version{" "}
            {plan.checkpoint.stateVersion} ({plan.checkpoint.status ?? "unreadable"}).
          </p>
        )}
        {plan.fallbackMessage ? (
          <p>
            {plan.fallbackMessage}{" "}
            {plan.fallbackCheckpointId ? (
              <Link href={checkpointHref(plan.fallbackCheckpointId)}>Go to the fallback checkpoint</Link>
            ) : null}
          </p>
        ) : null}
      </div>
      {afterVerdict}

      <h3>Side effects on resume</h3>
      {filled.length ? (
        <dl className="ckpt-effects">
          {filled.map((group) => {
            const items = plan.effects[group];
            const info = effectGroupInfo[group];
            return (
              <div
                key={group}
                className={info.blocks ? "ckpt-effects__group ckpt-effects__group--blocks" : "ckpt-effects__group"}
                data-group={group}
              >
                <dt>
                  {info.title} <span className="ckpt-effects__count">({items.length})</span>
                </dt>
                <dd>
                  <p className="hint">{info.meaning}</p>
                  <ul className="ckpt-effects__list">
                    {items.map((effect) => (
                      <EffectItem key={effect.executionId} effect={effect} />
                    ))}
                  </ul>
                </dd>
              </div>
            );
          })}
        </dl>
      ) : (
        <p className="subtle">The task has no side effects: nothing to skip, reconcile or retry.</p>
      )}
      {filled.length && empty.length ? (
        <p className="ckpt-effects__empty">
          None in:{" "}
          {empty.map((group, i) => (
            <span key={group} data-group={group}>
              {i > 0 ? " · " : ""}
              {effectGroupInfo[group].title} (0)
            </span>
          ))}
        </p>
      ) : null}

      <h3>Re-authorized, never taken from the checkpoint</h3>
      <TableWrap label="Budget: checkpoint, now, after restore">
        <table className="table table--compact ckpt-budget">
          <caption className="visually-hidden">Budget consumed: in the checkpoint, now, and after the restore</caption>
          <thead>
            <tr>
              <th scope="col">Budget</th>
              <th scope="col" className="num">
                Checkpoint
              </th>
              <th scope="col" className="num">
                Now
              </th>
              <th scope="col" className="num">
                After restore
              </th>
            </tr>
          </thead>
          <tbody>
            {budgetLines(plan.reauthorization.budget).map((line) => (
              <tr key={line.label}>
                <th scope="row">{line.label}</th>
                <td className="num mono">{line.checkpoint}</td>
                <td className="num mono">{line.current}</td>
                <td className="num mono">{line.resulting}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <ul className="ckpt-reauth">
        <li>
          <strong>Budget:</strong> money, tokens and hops spent stay spent (each is the greater of the two); the limit
          is re-read: {formatUsd(plan.reauthorization.budget.committedUsd)} committed now.
        </li>
        <li>
          <strong>Workflow:</strong> {describeWorkflow(plan.reauthorization.workflow)}
        </li>
        <li>
          <strong>Policy:</strong> {describePolicy(plan.reauthorization.policyVersion)}
        </li>
        <li>
          <strong>Credentials:</strong> {plan.reauthorization.credentials}
        </li>
      </ul>

      <h3>Lease</h3>
      <p className="ckpt-lease">{describeLease(plan.lease, plan.allowed)}</p>

      {plan.allowed ? (
        <>
          <h3>
            What changes (version {plan.current.version} → {plan.current.version + 1})
          </h3>
          {plan.diff.length === 0 ? (
            <p className="subtle">The restored state equals the current one, apart from its version.</p>
          ) : (
            <StateDiffList
              entries={plan.diff}
              beforeLabel={`now (v${plan.current.version})`}
              afterLabel={`after (v${plan.current.version + 1})`}
            />
          )}
        </>
      ) : null}
    </div>
  );
}

function EffectItem({ effect }: { effect: PlannedEffect }) {
  return (
    <li>
      <span className="mono">{effect.tool}</span> <span className="subtle">({effect.toolCallId})</span>{" "}
      <ExecutionStatusBadge status={effect.status} />
      {effect.irreversible ? <span className="tag tag--strong">irreversible</span> : null}
      <span className="ckpt-effects__key">
        key <span className="key">{effect.idempotencyKey}</span> · {effect.action}
      </span>
    </li>
  );
}
