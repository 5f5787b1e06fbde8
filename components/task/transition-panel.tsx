"use client";

import { useState, type FormEvent } from "react";
import { transitionTaskAction } from "@/app/(console)/tasks/[id]/actions";
import { idleTransitionForm, type TransitionFormState } from "@/lib/adapters/console/tasks/transition-form";
import type { StepView } from "@/lib/adapters/console/tasks/task-detail";
import { useRefreshWaitingCounts } from "@/components/count-badge";
import { ActionFeedback, useServerActionForm, type ActionNotice } from "@/components/server-action-form";
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
  const refreshCounts = useRefreshWaitingCounts();
  const { state, pending, submit } = useServerActionForm(transitionTaskAction, idleTransitionForm, {
    // The form keeps its transition id, so pressing the button again is a safe retry.
    lostAnswer: {
      status: "error",
      message:
        "No answer from the server, so the change may or may not have been applied. The page shows the current state as soon as the server answers; trying again is safe, a repeat is never applied twice.",
      details: [],
    },
    onDone: () => {
      setReason("");
      // The person's own decision: the inbox and queue badges say so now, not at their next poll.
      refreshCounts();
    },
  });

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    submit(event.currentTarget, (event.nativeEvent as SubmitEvent).submitter);
  }

  const needsReason = steps.filter((s) => s.reasonRequired && s.blockedBy.length === 0).map((s) => s.to);
  return (
    <section className="card" aria-labelledby="transition-heading">
      <h2 id="transition-heading">Take a transition</h2>
      <ActionFeedback notice={noticeOf(state)} />
      {steps.length === 0 ? (
        <p className="subtle">
          {terminal
            ? `${status} is a final state: this task no longer changes.`
            : `From ${status}, only agents or Verity itself move this task on.`}
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
            Applies to version {version}. If someone changes the task first, nothing is overwritten: you will see their
            change instead.
          </p>
          <p role="status" className="pending-note">
            {pending ? "Applying…" : ""}
          </p>
        </form>
      )}
    </section>
  );
}

function noticeOf(state: TransitionFormState): ActionNotice | null {
  switch (state.status) {
    case "idle":
      return null;
    case "done":
      return { kind: "done", tone: "success", message: state.message };
    case "conflict":
      return {
        kind: "conflict",
        title: state.message,
        detail: state.currentStatus
          ? `It is now ${state.currentStatus}. Check the timeline below for who changed it and why.`
          : null,
      };
    case "error":
      return { kind: "error", title: state.message, details: state.details };
  }
}
