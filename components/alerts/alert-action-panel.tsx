"use client";

import { useRef, useState } from "react";
import { alertAction } from "@/app/(console)/alerts/[id]/actions";
import {
  alertActionText,
  alertReasonMaxLength,
  type AlertAction,
  type AlertActionState,
} from "@/lib/adapters/console/alerts/alerts-form";
import { useRefreshWaitingCounts } from "@/components/count-badge";
import { ActionFeedback, useServerActionForm, type ActionNotice } from "@/components/server-action-form";
import { RequiredReasonField } from "@/components/reason-field";

function noticeOf(state: AlertActionState): ActionNotice | null {
  switch (state.status) {
    case "idle":
      return null;
    case "done":
      return { kind: "done", tone: state.tone, message: state.message };
    case "conflict":
      return {
        kind: "conflict",
        title: "Someone acted on this alert first — nothing was overwritten.",
        detail: state.message,
      };
    case "error":
      return { kind: "error", title: state.message, details: [] };
  }
}

/**
 * The alert's actions as one form with a reason: each button submits the
 * version the page was rendered at, so acting on an alert someone changed
 * meanwhile is refused and said so. The server action checks alerts:act.
 */
export function AlertActionPanel({
  alertId,
  version,
  actions,
}: {
  alertId: string;
  version: number;
  actions: AlertAction[];
}) {
  const [reason, setReason] = useState("");
  const [reasonError, setReasonError] = useState<string | null>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const refreshCounts = useRefreshWaitingCounts();
  const { state, pending, submit } = useServerActionForm<AlertActionState>(
    alertAction,
    { status: "idle" },
    {
      lostAnswer: { status: "error", message: "The answer was lost on the way; the page now shows what happened." },
      onDone: () => {
        setReason("");
        // The person's own decision: the inbox and queue badges say so now, not at their next poll.
        refreshCounts();
      },
    },
  );
  return (
    <form
      className="alert-actions"
      aria-label="Act on this alert"
      noValidate
      aria-busy={pending}
      onSubmit={(e) => {
        e.preventDefault();
        const submitter = (e.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
        const action = submitter?.value as AlertAction | undefined;
        if (action && alertActionText[action].needsReason && !reason.trim()) {
          setReasonError(
            `Give a reason to ${alertActionText[action].label.toLowerCase()}: it is recorded with your action.`,
          );
          reasonRef.current?.focus();
          return;
        }
        setReasonError(null);
        submit(e.currentTarget, submitter);
      }}
    >
      <ActionFeedback notice={noticeOf(state)} />
      <input type="hidden" name="alertId" value={alertId} />
      <input type="hidden" name="expectedVersion" value={version} />
      <RequiredReasonField
        id="alert-reason"
        value={reason}
        onChange={(value) => {
          setReason(value);
          if (reasonError && value.trim()) setReasonError(null);
        }}
        error={reasonError}
        hint="Recorded in the alert's history and the audit log, with your name. Reconcile needs none."
        maxLength={alertReasonMaxLength}
        inputRef={reasonRef}
      />
      <div className="button-row">
        {actions.map((a) => (
          <button
            key={a}
            type="submit"
            name="action"
            value={a}
            className={a === "acknowledge" ? "button button--primary" : "button"}
            disabled={pending}
          >
            {alertActionText[a].label}
          </button>
        ))}
      </div>
      <dl className="alert-actions__help">
        {actions.map((a) => (
          <div key={a}>
            <dt>{alertActionText[a].label}</dt>
            <dd>{alertActionText[a].help}</dd>
          </div>
        ))}
      </dl>
    </form>
  );
}
