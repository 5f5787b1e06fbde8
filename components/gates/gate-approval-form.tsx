"use client";

import { useId, useState, type FormEvent } from "react";
import { approveGateAction } from "@/app/(console)/tasks/[id]/gate-actions";
import { idleGateApprovalForm, type GateApprovalFormState } from "@/components/gates/gate-approval-state";
import { useRefreshWaitingCounts } from "@/components/count-badge";
import { ActionFeedback, useServerActionForm, type ActionNotice } from "@/components/server-action-form";

const lostAnswer: GateApprovalFormState = {
  status: "error",
  message:
    "No answer from the server: the approval may or may not be recorded. The page shows the gate as it is; submitting again is safe (same form id).",
  details: [],
};

function noticeOf(state: GateApprovalFormState): ActionNotice | null {
  switch (state.status) {
    case "idle":
      return null;
    case "done":
      return { kind: "done", tone: "success", message: state.message };
    case "conflict":
      return { kind: "conflict", title: state.message, detail: null };
    case "error":
      return { kind: "error", title: state.message, details: state.details };
  }
}

/** One human gate's approval, with the reason a person must give; the server decides whether this person may. */
export function GateApprovalForm({
  taskId,
  gate,
  version,
  transitionId,
}: {
  taskId: string;
  gate: string;
  /** The version this page shows: the approval's CAS target. */
  version: number;
  transitionId: string;
}) {
  const id = useId();
  const [reason, setReason] = useState("");
  const [reasonError, setReasonError] = useState<string | null>(null);
  const refreshCounts = useRefreshWaitingCounts();
  const { state, pending, submit } = useServerActionForm(approveGateAction, idleGateApprovalForm, {
    lostAnswer,
    onDone: () => {
      setReason("");
      // The person's own decision: the inbox and queue badges say so now, not at their next poll.
      refreshCounts();
    },
  });

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!reason.trim()) {
      setReasonError("Say why you approve: the timeline and the audit log keep it.");
      return;
    }
    setReasonError(null);
    submit(event.currentTarget, (event.nativeEvent as SubmitEvent).submitter as HTMLElement | null);
  }

  return (
    <form className="gate-form" onSubmit={onSubmit} noValidate aria-busy={pending} aria-label={`Approve ${gate}`}>
      <ActionFeedback notice={noticeOf(state)} />
      <input type="hidden" name="taskId" value={taskId} />
      <input type="hidden" name="gate" value={gate} />
      <input type="hidden" name="expectedVersion" value={version} />
      <input type="hidden" name="transitionId" value={transitionId} />
      <div className="field">
        <label htmlFor={`${id}-reason`}>Reason for approving {gate} (required)</label>
        <textarea
          id={`${id}-reason`}
          name="reason"
          rows={2}
          maxLength={1000}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          aria-invalid={reasonError ? true : undefined}
          aria-describedby={reasonError ? `${id}-error` : undefined}
        />
        {reasonError ? (
          <p id={`${id}-error`} className="field-error" role="alert">
            {reasonError}
          </p>
        ) : null}
      </div>
      <button type="submit" className="button button--primary button--small" disabled={pending}>
        {pending ? "Approving…" : `Approve ${gate}`}
      </button>
    </form>
  );
}
