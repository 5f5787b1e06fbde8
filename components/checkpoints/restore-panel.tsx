"use client";

import Link from "next/link";
import { useRef, useState, type FormEvent } from "react";
import { planRestoreAction, restoreCheckpointAction } from "@/app/(console)/checkpoints/[id]/actions";
import { checkpointHref } from "@/lib/adapters/console/checkpoints/checkpoints-format";
import {
  idlePlanForm,
  idleRestoreForm,
  lostRestoreAnswer,
  restoreReasonMaxLength,
  type RestoreFormState,
} from "@/lib/adapters/console/checkpoints/checkpoints-form";
import { RequiredReasonField } from "@/components/reason-field";
import { useServerActionForm } from "@/components/server-action-form";
import { RestorePlanView } from "@/components/checkpoints/restore-plan-view";

interface Props {
  checkpointId: string;
  checkpointVersion: number;
  taskId: string;
  /** The version the page shows; the plan carries the one it was made at, which is what a confirmation names. */
  taskVersion: number;
}

/**
 * The engineers' restore: plan first (a dry run that writes nothing), then
 * confirm that plan with a reason. A stale checkpoint is refused until the
 * engineer ticks "rewind", which says what it does. The confirmation names
 * the task version the plan was made at, so a task that moved since is a
 * conflict, never a restore over newer state; a plan can be confirmed once
 * (its restore id makes a double submit a replay). Kept mounted across
 * refreshes (keyed by checkpoint), so answers stay on screen.
 */
export function RestorePanel({ checkpointId, checkpointVersion, taskId, taskVersion }: Props) {
  const [rewind, setRewind] = useState(false);
  const [reason, setReason] = useState("");
  const [reasonError, setReasonError] = useState<string | null>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  /** Restore ids of plans already confirmed (applied, refused or in conflict): a plan is confirmed once. */
  const [spent, setSpent] = useState<ReadonlySet<string>>(new Set());

  const {
    state: planState,
    pending: planning,
    submit: submitPlan,
  } = useServerActionForm(planRestoreAction, idlePlanForm, {
    lostAnswer: {
      status: "error",
      message: "No answer from the server; nothing was changed (planning never does). Try again.",
    },
  });

  // A plan whose confirmation reached the engine (applied, refused there, or in conflict) is spent;
  // one refused before it (a lost answer, a form error) may be confirmed again under its restore id.
  const confirmOnce = async (previous: RestoreFormState, formData: FormData): Promise<RestoreFormState> => {
    const result = await restoreCheckpointAction(previous, formData);
    if (result.status !== "error" || result.code !== null)
      setSpent((s) => new Set([...s, String(formData.get("restoreId"))]));
    if (result.status === "done") {
      setReason("");
      setRewind(false);
    }
    return result;
  };
  const {
    state: restoreState,
    pending: restoring,
    submit: submitRestore,
  } = useServerActionForm(confirmOnce, idleRestoreForm, {
    lostAnswer: { status: "error", message: lostRestoreAnswer, code: null, fallbackCheckpointId: null },
  });

  function onPlan(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    submitPlan(event.currentTarget, null);
  }

  function onRestore(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!reason.trim()) {
      setReasonError("Give a reason: it is recorded in the task's timeline with the restore.");
      reasonRef.current?.focus();
      return;
    }
    setReasonError(null);
    submitRestore(event.currentTarget, null);
  }

  const plan = planState.status === "done" ? planState : null;
  const planSpent = plan ? spent.has(plan.restoreId) : false;
  const older = checkpointVersion < taskVersion;
  // The rewind choice is offered once a plan has said "stale", and stays while it is ticked.
  const offerRewind = older && (rewind || plan?.plan.refusal?.code === "stale");
  const planForm = (
    <form onSubmit={onPlan} className="ckpt-plan-form" aria-busy={planning}>
      <input type="hidden" name="checkpointId" value={checkpointId} />
      {offerRewind ? (
        <div className="ckpt-rewind">
          <input
            id="restore-rewind"
            type="checkbox"
            name="rewind"
            checked={rewind}
            onChange={(e) => setRewind(e.target.checked)}
            aria-describedby="restore-rewind-hint"
          />
          <label htmlFor="restore-rewind">Rewind to this older checkpoint</label>
          <p id="restore-rewind-hint" className="hint">
            Writes the state of version {checkpointVersion} as new version {taskVersion + 1}, on top of the history:
            versions 1 to {taskVersion} stay as they are and readable. Work done since version {checkpointVersion} is
            not undone outside Verity; its side effects keep their receipts.
          </p>
        </div>
      ) : null}
      <button type="submit" className="button" disabled={planning}>
        {plan ? (rewind ? "Plan the rewind" : "Plan again") : "Plan restore"}
      </button>
      <p role="status" className="pending-note">
        {planning ? "Planning…" : ""}
      </p>
    </form>
  );
  return (
    <section className="card ckpt-restore" aria-labelledby="restore-heading">
      <h2 id="restore-heading">Restore</h2>
      <RestoreFeedback state={restoreState} taskId={taskId} />
      <p className="hint">
        Plan first: a dry run that changes nothing. A restore writes this checkpoint&apos;s state as a new version of
        the task (version {taskVersion + 1} now); every earlier version stays readable.
      </p>
      {plan && !planSpent ? null : planForm}
      {planState.status === "error" ? (
        <div className="notice notice--error" role="alert">
          {planState.message}
        </div>
      ) : null}
      {plan && !planSpent ? (
        <>
          <RestorePlanView plan={plan.plan} afterVerdict={planForm} maskedFields={plan.maskedFields} />
          {plan.plan.allowed ? (
            <form onSubmit={onRestore} className="ckpt-confirm" aria-busy={restoring} noValidate>
              <input type="hidden" name="checkpointId" value={checkpointId} />
              <input type="hidden" name="expectedVersion" value={plan.plan.current.version} />
              <input type="hidden" name="restoreId" value={plan.restoreId} />
              {plan.plan.rewind ? <input type="hidden" name="rewind" value="on" /> : null}
              <RequiredReasonField
                id="restore-reason"
                inputRef={reasonRef}
                rows={2}
                maxLength={restoreReasonMaxLength}
                value={reason}
                onChange={(value) => {
                  setReason(value);
                  if (reasonError && value.trim()) setReasonError(null);
                }}
                error={reasonError}
                hint="Recorded in the task's timeline as “restored from checkpoint …: your reason”, and in the restore history."
              />
              <button type="submit" className="button button--danger" disabled={restoring}>
                {plan.plan.rewind ? "Rewind" : "Restore"} as version {plan.plan.current.version + 1}
              </button>
              <p className="hint">
                Applies only if the task is still at version {plan.plan.current.version}. If it changed since this plan,
                nothing is overwritten: you will be asked to plan again.
              </p>
              <p role="status" className="pending-note">
                {restoring ? "Restoring…" : ""}
              </p>
            </form>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

function RestoreFeedback({ state, taskId }: { state: RestoreFormState; taskId: string }) {
  switch (state.status) {
    case "idle":
      return null;
    case "done":
      return (
        <div className="notice notice--success" role="status">
          <p>{state.message}</p>
          <p>
            <Link href={`/tasks/${encodeURIComponent(taskId)}#timeline-heading`}>
              See version {state.version} in the task&apos;s timeline
            </Link>{" "}
            · <Link href={`/tasks/${encodeURIComponent(taskId)}/checkpoints`}>Checkpoint timeline</Link>
          </p>
        </div>
      );
    case "conflict":
      return (
        <div className="notice notice--warning" role="alert">
          <p className="notice__title">{state.message}</p>
        </div>
      );
    case "error":
      return (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">{state.message}</p>
          {state.fallbackCheckpointId ? (
            <p>
              <Link href={checkpointHref(state.fallbackCheckpointId)}>Go to the fallback checkpoint</Link>
            </p>
          ) : null}
        </div>
      );
  }
}
