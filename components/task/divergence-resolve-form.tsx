"use client";

import { useRouter } from "next/navigation";
import { startTransition, useActionState, useId, useRef, useState, type FormEvent } from "react";
import { resolveDivergenceAction } from "@/app/(console)/tasks/[id]/divergence-actions";
import { idleResolveForm, reasonMaxLength, type ResolveFormState } from "@/lib/adapters/console/reviews/reviews-form";

/** Resolves one alert with a reason, on the alert version the page showed (a second resolver sees the first one's resolution). */
export function DivergenceResolveForm({
  alertId,
  taskId,
  version,
}: {
  alertId: string;
  taskId: string;
  version: number;
}) {
  const router = useRouter();
  const id = useId();
  const [reason, setReason] = useState("");
  const [reasonError, setReasonError] = useState<string | null>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const [state, dispatch, pending] = useActionState(
    async (previous: ResolveFormState, formData: FormData): Promise<ResolveFormState> => {
      try {
        return await resolveDivergenceAction(previous, formData);
      } catch {
        router.refresh();
        return {
          status: "error",
          message:
            "No answer from the server: the alert may or may not be resolved. The page shows the current state when the server answers.",
          details: [],
        };
      }
    },
    idleResolveForm,
  );

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!reason.trim()) {
      setReasonError("Say how it was resolved: the resolution is kept with the alert.");
      reasonRef.current?.focus();
      return;
    }
    setReasonError(null);
    const formData = new FormData(event.currentTarget);
    startTransition(() => dispatch(formData));
  }

  return (
    <form className="resolve-form" onSubmit={onSubmit} noValidate aria-busy={pending}>
      {state.status === "conflict" || state.status === "error" ? (
        <div className={state.status === "conflict" ? "notice notice--warning" : "notice notice--error"} role="alert">
          {state.message}
        </div>
      ) : state.status === "done" ? (
        <div className="notice notice--success" role="status">
          {state.message}
        </div>
      ) : null}
      <input type="hidden" name="alertId" value={alertId} />
      <input type="hidden" name="taskId" value={taskId} />
      <input type="hidden" name="expectedVersion" value={version} />
      <div className="field">
        <label htmlFor={`${id}-reason`}>Resolution (required)</label>
        <textarea
          id={`${id}-reason`}
          ref={reasonRef}
          name="resolution"
          rows={2}
          maxLength={reasonMaxLength}
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
      <button type="submit" className="button button--small" disabled={pending}>
        {pending ? "Resolving…" : "Mark resolved"}
      </button>
    </form>
  );
}
