"use client";

import { Suspense, use, useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import type { ProviderVerdict } from "@/lib/model/inbox/inbox-items";
import type { ReviewDecisionKind, ReviewStatus } from "@/lib/generated/prisma/enums";
import { decideReviewAction } from "@/app/(console)/reviews/[id]/actions";
import { decisionInfo, decisionKinds, reviewStatusInfo } from "@/lib/adapters/console/reviews/reviews-format";
import {
  idleDecisionForm,
  lostAnswerMessage,
  reasonMaxLength,
  type DecisionFormState,
} from "@/lib/adapters/console/reviews/reviews-form";
import { isUndecided } from "@/lib/adapters/console/reviews/reviews-query";
import { RequiredReasonField } from "@/components/reason-field";
import { useRefreshWaitingCounts } from "@/components/count-badge";
import { ActionFeedback, useServerActionForm, type ActionNotice } from "@/components/server-action-form";

interface Props {
  reviewId: string;
  /** The version this page shows: the CAS target of every button. */
  version: number;
  status: ReviewStatus;
  /** The review's current round: a reopened review asks everyone again. */
  round: number;
  /** The viewer's own decision in this round in words, when they made one: nobody decides twice in one round. */
  viewerDecision: string | null;
  requiredApprovals: number;
  approvalsGiven: number;
  idempotencyKey: string;
  /** Why re-executing is refused right now (an open divergence alert), or null. The server checks again. */
  executeBlockedBy: string | null;
  /** The action was frozen before it was ever sent (the task's instructions): there is no provider evidence to accept. */
  neverSent?: boolean;
  /** The tool that undoes this call's effect; null: no "accept & compensate" is offered (the server refuses it too). */
  compensatingTool?: string | null;
  /**
   * What the provider says of the key (null: it could not say): the matching action is the primary one. A
   * promise, asked of the provider while the page streams: until it settles the buttons show without advice.
   * Only the buttons wait for it; the reason typed and a decision's answer belong to this panel, which is
   * rendered once (a panel inside the suspense boundary was replaced when the answer came, and with it
   * what the person had typed).
   */
  verdict: Promise<ProviderVerdict | null>;
  /** What an approval that executes sends, in words: "the $750.00 refund". */
  effect?: string;
}

const buttonClass: Record<ReviewDecisionKind, string> = {
  approve_execute: "button button--primary",
  approve_accept_evidence: "button button--primary-soft",
  approve_compensate: "button",
  reject: "button button--danger",
  escalate: "button",
};

/**
 * The evidence picks the solid button: the provider holds the effect (FOUND) → accept its evidence, sending
 * nothing; it holds nothing (NOT_FOUND) → approve & execute under the same key. Otherwise the defaults.
 */
function buttonClassFor(kind: ReviewDecisionKind, verdict: ProviderVerdict | null): string {
  if (verdict === "FOUND") {
    if (kind === "approve_accept_evidence") return "button button--primary";
    if (kind === "approve_execute") return "button";
  }
  if (verdict === "NOT_FOUND" && kind === "approve_accept_evidence") return "button";
  return buttonClass[kind];
}

const pendingText: Record<ReviewDecisionKind, string> = {
  approve_execute: "Recording your approval and sending the request under the same key…",
  approve_accept_evidence: "Recording your approval of the provider's evidence…",
  approve_compensate: "Recording the provider's evidence and the compensation…",
  reject: "Recording the rejection…",
  escalate: "Escalating…",
};

/**
 * The four decisions on a frozen action, each with a required reason. Kept
 * mounted across refreshes (keyed by review only), so the answer to a
 * decision, a conflict above all, stays on screen while the fresh state
 * renders around it.
 */
export function DecisionPanel({
  reviewId,
  version,
  status,
  round,
  viewerDecision,
  requiredApprovals,
  approvalsGiven,
  idempotencyKey,
  executeBlockedBy,
  neverSent = false,
  compensatingTool = null,
  verdict,
  effect = "the call",
}: Props) {
  const [reason, setReason] = useState("");
  const [reasonError, setReasonError] = useState<string | null>(null);
  const [chosen, setChosen] = useState<ReviewDecisionKind | null>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const resultRef = useRef<HTMLDivElement>(null);
  const refreshCounts = useRefreshWaitingCounts();
  const { state, pending, submit } = useServerActionForm(decideReviewAction, idleDecisionForm, {
    lostAnswer: { status: "error", message: lostAnswerMessage, details: [] },
    onDone: () => {
      setReason("");
      // The person's own decision: the inbox and queue badges say so now, not at their next poll.
      refreshCounts();
    },
  });

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    if (!reason.trim()) {
      setReasonError("Give a reason: it is recorded with your decision and shown to the next operator.");
      reasonRef.current?.focus();
      return;
    }
    setReasonError(null);
    setChosen((submitter?.value as ReviewDecisionKind | undefined) ?? null);
    submit(event.currentTarget, submitter);
  }

  // The answer takes the focus: a decision removes the form (and the button that had the focus), and a keyboard or
  // screen reader user must land on what happened, not on <body>.
  useEffect(() => {
    if (state.status !== "idle") resultRef.current?.focus();
  }, [state]);

  const open = isUndecided(status);
  const lastApproval = approvalsGiven + 1 >= requiredApprovals;
  const decided = viewerDecision !== null;
  // The provider's advice and the buttons, whose primary one the verdict picks.
  const choices = (verdict: ProviderVerdict | null) => (
    <>
      {verdict === "FOUND" || verdict === "NOT_FOUND" ? (
        <p className="hint" data-testid="verdict-advice">
          {verdict === "FOUND"
            ? "The provider has this effect: accepting its evidence records it as done and sends nothing."
            : "The provider has nothing under this key: approving sends it, once, under the same key."}
        </p>
      ) : null}
      <ul className="decision-buttons">
        {decisionKinds
          .filter((kind) => kind !== "approve_compensate" || compensatingTool !== null)
          .map((kind) => {
            const info = decisionInfo[kind];
            const helpId = `decision-help-${kind}`;
            const blocked =
              kind === "approve_execute"
                ? executeBlockedBy
                : (kind === "approve_accept_evidence" || kind === "approve_compensate") && neverSent
                  ? "this action was never sent, so the provider has nothing to show; approve sending it, or reject it."
                  : null;
            let help = info.help;
            if (kind === "approve_compensate" && compensatingTool)
              help = `${help} Compensating tool: ${compensatingTool}.`;
            if (kind === "approve_execute") {
              help = `${help} Key: ${idempotencyKey}.`;
              help = lastApproval
                ? `${help} Your approval sends ${effect}${requiredApprovals > 1 ? `: it is the last of the ${requiredApprovals} approvals four eyes needs` : ""}.`
                : `${help} This is approval ${approvalsGiven + 1} of ${requiredApprovals}: nothing is sent until a different operator approves too.`;
            }
            return (
              <li key={kind}>
                <button
                  type="submit"
                  name="decision"
                  value={kind}
                  className={buttonClassFor(kind, verdict)}
                  disabled={pending || blocked !== null}
                  aria-describedby={helpId}
                >
                  {info.button}
                </button>
                <p id={helpId} className={blocked ? "blocked-reason" : "decision-help"}>
                  {blocked ? `Not now: ${blocked}` : help}
                </p>
              </li>
            );
          })}
      </ul>
    </>
  );
  return (
    <section className="card decision-card" aria-labelledby="decide-heading">
      <h2 id="decide-heading">Decide</h2>
      <div ref={resultRef} tabIndex={-1} className="decision-result" data-testid="decision-result">
        <ActionFeedback notice={noticeOf(state)} />
      </div>
      {!open ? (
        <p className="subtle">
          This review is decided ({reviewStatusInfo[status].label.toLowerCase()}): nothing more can be decided on it.
          Every decision is listed under Approvals.
        </p>
      ) : decided ? (
        <p className="decided-note">
          You {viewerDecision} {round > 1 ? `in round ${round}` : "on this review"}. Nobody decides twice{" "}
          {round > 1 ? "in one round" : "on one review"}:{" "}
          {requiredApprovals > 1 && approvalsGiven < requiredApprovals
            ? "the second approval must come from a different operator."
            : "the next decision is someone else's."}
        </p>
      ) : (
        <form onSubmit={onSubmit} className="decision-form" aria-busy={pending} noValidate>
          <input type="hidden" name="reviewId" value={reviewId} />
          <input type="hidden" name="expectedVersion" value={version} />
          <RequiredReasonField
            id="decision-reason"
            inputRef={reasonRef}
            value={reason}
            onChange={(value) => {
              setReason(value);
              if (reasonError && value.trim()) setReasonError(null);
            }}
            error={reasonError}
            hint="Recorded with your name on the review, the execution history and the task's timeline."
            maxLength={reasonMaxLength}
          />
          {lastApproval && executeBlockedBy === null ? (
            <p className="notice notice--info final-approver" data-testid="final-approver">
              {requiredApprovals > 1
                ? `${approvalsGiven} of ${requiredApprovals} approvals are in. Your approval sends ${effect}: Approve & execute sends it now, under the same key.`
                : `Your approval sends ${effect}: Approve & execute sends it now, under the same key.`}
            </p>
          ) : null}
          <Suspense fallback={choices(null)}>
            <WithVerdict verdict={verdict} render={choices} />
          </Suspense>
          <p className="hint">
            Applies to version {version} of this review. If another operator decides first, nothing is overwritten: you
            will see their decision instead.
          </p>
          <p role="status" className="pending-note">
            {pending && chosen
              ? chosen === "approve_execute" && !lastApproval
                ? "Recording your approval…"
                : pendingText[chosen]
              : ""}
          </p>
        </form>
      )}
    </section>
  );
}

function noticeOf(state: DecisionFormState): ActionNotice | null {
  switch (state.status) {
    case "idle":
      return null;
    case "done":
      return { kind: "done", tone: state.tone, message: state.message };
    case "conflict":
      return { kind: "conflict", title: state.message, detail: state.detail };
    case "error":
      return { kind: "error", title: state.message, details: state.details };
  }
}

/** Renders with the provider's verdict once it has come (the nearest suspense boundary shows the rest meanwhile). */
function WithVerdict({
  verdict,
  render,
}: {
  verdict: Promise<ProviderVerdict | null>;
  render: (verdict: ProviderVerdict | null) => ReactNode;
}) {
  return render(use(verdict));
}
