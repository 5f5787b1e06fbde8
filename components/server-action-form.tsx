"use client";

import { useRouter } from "next/navigation";
import { startTransition, useActionState, type ReactNode } from "react";
import { ownActionStarted } from "@/components/live/live-events";

/**
 * What the console's decision forms share: calling a server action that may
 * lose its answer, and showing what it answered. A form that calls a server
 * action with `action=` lets React reset its fields when the answer arrives,
 * conflicts included; these forms submit by hand instead, so what a person
 * typed survives a refusal.
 */

/** Every such action answers with one of these (plus whatever fields its form needs). */
export type ActionAnswer = { status: "idle" } | { status: "done" } | { status: "conflict" } | { status: "error" };

/**
 * useActionState around `action`, with the lost answer made explicit: a
 * thrown call means the answer never arrived, not that nothing happened, so
 * the page is refreshed to show what did and `lostAnswer` says so.
 */
export function useServerActionForm<S extends ActionAnswer>(
  action: (previous: S, formData: FormData) => Promise<S>,
  idle: S,
  options: { lostAnswer: S; onDone?: () => void },
): { state: S; pending: boolean; submit: (form: HTMLFormElement, submitter: HTMLElement | null) => void } {
  const router = useRouter();
  // S is a plain object type, so Awaited<S> is S; React's typings cannot see that through a type parameter.
  const [state, dispatch, pending] = useActionState<S, FormData>(async (previous, formData) => {
    // The page's live refresh waits for this answer, which refreshes the page itself (components/live/live-events.tsx).
    const answered = ownActionStarted();
    try {
      const result = await action(previous as S, formData);
      if (result.status === "done") options.onDone?.();
      return result;
    } catch {
      router.refresh();
      return options.lostAnswer;
    } finally {
      answered();
    }
  }, idle as Awaited<S>);
  const submit = (form: HTMLFormElement, submitter: HTMLElement | null) => {
    const formData = new FormData(form, submitter);
    startTransition(() => dispatch(formData));
  };
  return { state: state as S, pending, submit };
}

/** The answer above a form, in the tone it deserves. */
export type ActionNotice =
  | { kind: "done"; tone: "success" | "info"; message: string }
  | { kind: "conflict"; title: string; detail: string | null }
  | { kind: "error"; title: string; details: string[] };

export function ActionFeedback({ notice }: { notice: ActionNotice | null }) {
  if (!notice) return null;
  switch (notice.kind) {
    case "done":
      return (
        <div className={notice.tone === "success" ? "notice notice--success" : "notice notice--info"} role="status">
          {notice.message}
        </div>
      );
    case "conflict":
      return (
        <div className="notice notice--warning" role="alert">
          <p className="notice__title">{notice.title}</p>
          {notice.detail ? <p>{notice.detail}</p> : null}
        </div>
      );
    case "error":
      return (
        <div className="notice notice--error" role="alert">
          <p className="notice__title">{notice.title}</p>
          {notice.details.length ? (
            <ul>
              {notice.details.map((d) => (
                <li key={d}>{d}</li>
              ))}
            </ul>
          ) : null}
        </div>
      );
  }
}

/**
 * The answer above a form whose every answer is one message (people,
 * agents, retention): done in green, with what it shows only once
 * (`shownOnce`: a token, a one-time password); a conflict in amber; an
 * error in red.
 */
export function MessageAnswer({
  state,
  shownOnce,
}: {
  state: { status: "idle" } | { status: "done" | "conflict" | "error"; message: string };
  shownOnce?: ReactNode;
}) {
  switch (state.status) {
    case "idle":
      return null;
    case "done":
      return (
        <div className="notice notice--success" role="status">
          <p>{state.message}</p>
          {shownOnce}
        </div>
      );
    case "conflict":
      return (
        <div className="notice notice--warning" role="alert">
          {state.message}
        </div>
      );
    case "error":
      return (
        <div className="notice notice--error" role="alert">
          {state.message}
        </div>
      );
  }
}
