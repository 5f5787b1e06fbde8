"use client";

import { useRouter } from "next/navigation";
import { startTransition, useActionState, useState, type FormEvent } from "react";
import { transitionTaskAction } from "@/app/(console)/tasks/[id]/actions";
import { idleTransitionForm, type TransitionFormState } from "@/lib/console/transition-form";
import type { StepView } from "@/lib/console/task-detail";
import { BlockedReasons } from "@/components/task/blocked-reasons";

interface Props {
  taskId: string;
  /** The version this page shows: the CAS target of every button. */
  version: number;
  /** Minted when the page rendered: a double submit of this form replays, never applies twice. */
  transitionId: string;
  status: string;
  terminal: boolean;
  steps: StepView[];
}

/**
 * The manual transitions a person may take from here. Kept mounted across
 * refreshes (keyed by task only), so a conflict message stays on screen while
 * the fresh state renders around it.
 */
export function TransitionPanel({ taskId, version, transitionId, status, terminal, steps }: Props) {
  const [reason, setReason] = useState("");
  const router = useRouter();
  const [state, dispatch, pending] = useActionState(async (previous: TransitionFormState, formData: FormData): Promise<TransitionFormState> => {
    try {
      const result = await transitionTaskAction(previous, formData);
      if (result.status === "done") setReason("");
      return result;
    } catch {
      // The answer was lost, not necessarily the change. The form keeps its
      // transition id, so pressing the button again is a safe retry.
      router.refresh();
      return {
        status: "error",
        message: "No answer from the server, so the change may or may not have been applied. The page shows the current state as soon as the server answers; trying again is safe, a repeat is never applied twice.",
        details: [],
      };
    }
  }, idleTransitionForm);

  // Submitted by hand rather than through `action`, so React does not reset the
  // reason field when the server answers with a conflict or an error.
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const submitter = (event.nativeEvent as SubmitEvent).submitter;
    const formData = new FormData(event.currentTarget, submitter);
    startTransition(() => dispatch(formData));
  }

  const needsReason = steps.filter((s) => s.reasonRequired && s.blockedBy.length === 0).map((s) => s.to);
  return (
    <section className="card" aria-labelledby="transition-heading">
      <h2 id="transition-heading">Take a transition</h2>
      <Feedback state={state} />
      {steps.length === 0 ? (
        <p className="subtle">
          {terminal ? `${status} is a final state: this task no longer changes.` : `From ${status}, only agents or Verity itself move this task on.`}
        </p>
      ) : (
        <form onSubmit={onSubmit} className="transition-form" aria-busy={pending}>
          <input type="hidden" name="taskId" value={taskId} />
          <input type="hidden" name="expectedVersion" value={version} />
          <input type="hidden" name="transitionId" value={transitionId} />
          <div className="field">
            <label htmlFor="transition-reason">Reason</label>
            <textarea
              id="transition-reason"
              name="reason"
              rows={2}
              maxLength={1000}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              aria-describedby="transition-reason-hint"
            />
            <p id="transition-reason-hint" className="hint">
              Recorded in the timeline.{needsReason.length ? ` Required for ${needsReason.join(", ")}.` : ""}
            </p>
          </div>
          <ul className="step-buttons">
            {steps.map((step) => {
              const blocked = step.blockedBy.length > 0;
              const whyId = `why-${step.to}`;
              return (
                <li key={step.to}>
                  <button
                    type="submit"
                    name="to"
                    value={step.to}
                    disabled={blocked || pending}
                    aria-describedby={blocked ? whyId : undefined}
                    className={`button ${step.reasonRequired ? "button--danger" : "button--primary"}`}
                  >
                    {step.description} <span aria-hidden="true">→</span>
                    <span className="visually-hidden">to</span> <span className="mono">{step.to}</span>
                  </button>
                  {blocked ? <BlockedReasons id={whyId} prefix="Not now" reasons={step.blockedBy} /> : null}
                </li>
              );
            })}
          </ul>
          <p className="hint">
            Applies to version {version}. If someone changes the task first, nothing is overwritten: you will see their change instead.
          </p>
          <p role="status" className="pending-note">
            {pending ? "Applying…" : ""}
          </p>
        </form>
      )}
    </section>
  );
}

function Feedback({ state }: { state: TransitionFormState }) {
  switch (state.status) {
    case "idle":
      return null;
    case "done":
      return (
        <div className="notice notice--success" role="status">
          {state.message}
        </div>
      );
    case "conflict":
      return (
        <div className="notice notice--warning" role="alert">
          <p className="notice__title">{state.message}</p>
          {state.currentStatus ? <p>It is now {state.currentStatus}. Check the timeline below for who changed it and why.</p> : null}
        </div>
      );
    case "error":
      return (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">{state.message}</p>
          {state.details.length ? (
            <ul>
              {state.details.map((d) => (
                <li key={d}>{d}</li>
              ))}
            </ul>
          ) : null}
        </div>
      );
  }
}
