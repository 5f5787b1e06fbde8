"use client";

import { useId, useRef, type FormEvent } from "react";
import { annotateEntryAction } from "@/app/(console)/audit/actions";
import { idleAnnotationForm, type AnnotationFormState } from "@/lib/adapters/console/audit/annotation-form";
import { MessageAnswer, useServerActionForm } from "@/components/server-action-form";

const lostAnswer: AnnotationFormState = {
  status: "error",
  message:
    "The server's answer was lost. The page was reloaded: look for your annotation in the history before adding it again.",
  fields: {},
};

/**
 * A correction of one audit entry: the entry's id (filled in by the row's
 * Annotate button, or pasted) and a note saying what is wrong and what is
 * right. The entry is never edited; the annotation joins its chain.
 */
export function AnnotationForm({
  entryId,
  onEntryIdChange,
  taskId,
  describedEntry,
  onDone,
}: {
  entryId: string;
  onEntryIdChange?: (value: string) => void;
  /** The history's task: the entry must be one of its own. */
  taskId?: string;
  /** The selected entry in words, when a row's button chose it. */
  describedEntry?: string | null;
  /** After an annotation was added: the history loads it. */
  onDone?: () => void;
}) {
  const id = useId();
  const noteRef = useRef<HTMLTextAreaElement>(null);
  const { state, pending, submit } = useServerActionForm(annotateEntryAction, idleAnnotationForm, {
    lostAnswer,
    onDone: () => {
      if (noteRef.current) noteRef.current.value = "";
      onDone?.();
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    submit(form, (event.nativeEvent as SubmitEvent).submitter);
  };
  const lastDone = state.status === "done" ? state.annotationId : null;
  const entryError = state.status === "error" ? state.fields.entryId : undefined;
  const noteError = state.status === "error" ? state.fields.note : undefined;
  return (
    <form
      onSubmit={onSubmit}
      className="annotation-form"
      // One form per entry on /audit: each named by its entry, so none is mistaken for another.
      aria-label={onEntryIdChange ? "Add a correction annotation" : `Add a correction annotation to entry ${entryId}`}
      data-last-annotation={lastDone ?? undefined}
    >
      <MessageAnswer state={state} />
      {taskId ? <input type="hidden" name="taskId" value={taskId} /> : null}
      <div className="field">
        <label htmlFor={`${id}-entry`}>Audit entry</label>
        <input
          id={`${id}-entry`}
          name="entryId"
          type="text"
          className="mono"
          autoComplete="off"
          spellCheck={false}
          value={entryId}
          readOnly={!onEntryIdChange}
          onChange={(e) => onEntryIdChange?.(e.target.value)}
          aria-invalid={entryError ? true : undefined}
          aria-describedby={`${id}-entry-hint`}
        />
        <p className="hint" id={`${id}-entry-hint`}>
          {describedEntry ?? "Choose an event's Annotate button, or paste an entry id (aud_…)."}
        </p>
        {entryError ? (
          <p className="field-error" role="alert">
            {entryError}
          </p>
        ) : null}
      </div>
      <div className="field">
        <label htmlFor={`${id}-note`}>Correction (required)</label>
        <textarea
          ref={noteRef}
          id={`${id}-note`}
          name="note"
          rows={2}
          maxLength={2000}
          aria-invalid={noteError ? true : undefined}
          aria-describedby={`${id}-note-hint`}
        />
        <p className="hint" id={`${id}-note-hint`}>
          What the entry got wrong and what is right. Recorded in the audit log beside the entry, with your name; the
          entry itself is never changed. Allowed under a legal hold.
        </p>
        {noteError ? (
          <p className="field-error" role="alert">
            {noteError}
          </p>
        ) : null}
      </div>
      <div className="button-row">
        <button type="submit" className="button button--primary" disabled={pending}>
          {pending ? "Adding…" : "Add annotation"}
        </button>
      </div>
    </form>
  );
}
