"use client";

import { useState, type FormEvent, type ReactNode } from "react";
import {
  applyRetentionAction,
  applyTaskRetentionAction,
  placeHoldAction,
  releaseHoldAction,
  setRetentionTermAction,
} from "@/app/(console)/audit/retention/actions";
import type { DataClass } from "@/lib/model/retention/data-classes-held";
import { idleRetentionForm, type RetentionFormState } from "@/lib/adapters/console/retention/retention-form";
import { MessageAnswer, useServerActionForm } from "@/components/server-action-form";

const lostAnswer: RetentionFormState = {
  status: "error",
  message:
    "The server's answer was lost. The page was reloaded: check the lists below for what happened before trying again.",
  fields: {},
};

function useRetentionForm(
  action: (previous: RetentionFormState, formData: FormData) => Promise<RetentionFormState>,
  onDone?: () => void,
) {
  const form = useServerActionForm(action, idleRetentionForm, { lostAnswer, onDone });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const submitter = (event.nativeEvent as SubmitEvent).submitter;
    form.submit(event.currentTarget, submitter);
  };
  return { ...form, onSubmit };
}

function fieldError(state: RetentionFormState, ...names: string[]): string | undefined {
  if (state.status !== "error") return undefined;
  for (const n of names) if (state.fields[n]) return state.fields[n];
  return undefined;
}

function Field({
  id,
  label,
  error,
  hint,
  children,
}: {
  id: string;
  label: string;
  error?: string;
  hint?: string;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

export function PlaceHoldForm() {
  const { state, pending, onSubmit } = useRetentionForm(placeHoldAction, () => {
    (document.getElementById("place-hold-form") as HTMLFormElement | null)?.reset();
  });
  const taskError = fieldError(state, "task_id");
  const fromError = fieldError(state, "from");
  const toError = fieldError(state, "to");
  const reasonError = fieldError(state, "reason");
  return (
    <form id="place-hold-form" onSubmit={onSubmit} className="retention-form" aria-label="Place a legal hold">
      <MessageAnswer state={state} />
      <div className="retention-form__row">
        <Field
          id="hold-task"
          label="Task id (optional)"
          error={taskError}
          hint="Holds that task's entries. Leave empty to hold by time only."
        >
          <input
            id="hold-task"
            name="taskId"
            type="text"
            autoComplete="off"
            spellCheck={false}
            aria-invalid={taskError ? true : undefined}
          />
        </Field>
        <Field id="hold-from" label="From (UTC, optional)" error={fromError}>
          <input id="hold-from" name="from" type="datetime-local" aria-invalid={fromError ? true : undefined} />
        </Field>
        <Field id="hold-to" label="To (UTC, optional)" error={toError}>
          <input id="hold-to" name="to" type="datetime-local" aria-invalid={toError ? true : undefined} />
        </Field>
      </div>
      <Field
        id="hold-reason"
        label="Reason (required)"
        error={reasonError}
        hint="Recorded in the audit log with the hold. No task and no time bound holds every entry."
      >
        <textarea
          id="hold-reason"
          name="reason"
          rows={2}
          maxLength={1000}
          required
          aria-invalid={reasonError ? true : undefined}
        />
      </Field>
      <div className="button-row">
        <button type="submit" className="button button--primary" disabled={pending}>
          {pending ? "Placing…" : "Place legal hold"}
        </button>
      </div>
    </form>
  );
}

export function ReleaseHoldForm({ holdId }: { holdId: string }) {
  const { state, pending, onSubmit } = useRetentionForm(releaseHoldAction);
  const reasonError = fieldError(state, "reason", "");
  const id = `release-${holdId}`;
  return (
    <form onSubmit={onSubmit} className="retention-release" aria-label={`Release legal hold ${holdId}`}>
      <MessageAnswer state={state} />
      <input type="hidden" name="holdId" value={holdId} />
      <label htmlFor={id} className="visually-hidden">
        Reason for releasing {holdId}
      </label>
      <input
        id={id}
        name="reason"
        type="text"
        placeholder="Reason for release (required)"
        maxLength={1000}
        required
        aria-invalid={reasonError ? true : undefined}
      />
      <button type="submit" className="button button--small" disabled={pending}>
        {pending ? "Releasing…" : "Release"}
      </button>
      {reasonError ? (
        <p className="field-error" role="alert">
          {reasonError}
        </p>
      ) : null}
    </form>
  );
}

export function ApplyRetentionForm({ defaultDays }: { defaultDays: number }) {
  const { state, pending, onSubmit } = useRetentionForm(applyRetentionAction);
  const daysError = fieldError(state, "days");
  const confirmError = fieldError(state, "confirm");
  return (
    <form onSubmit={onSubmit} className="retention-form" aria-label="Apply retention now">
      <MessageAnswer state={state} />
      <div className="retention-form__row">
        <Field id="retention-days" label="Delete entries older than (days)" error={daysError}>
          <input
            id="retention-days"
            name="days"
            type="number"
            min={1}
            max={36500}
            step={1}
            defaultValue={defaultDays}
            required
            aria-invalid={daysError ? true : undefined}
          />
        </Field>
      </div>
      <div className="field">
        <label className="retention-check">
          <input name="confirm" type="checkbox" value="yes" aria-invalid={confirmError ? true : undefined} />
          <span>
            I understand that older entries not under a legal hold are deleted for good; each stream then starts at a
            recorded anchor.
          </span>
        </label>
        {confirmError ? (
          <p className="field-error" role="alert">
            {confirmError}
          </p>
        ) : null}
      </div>
      <div className="button-row">
        <button type="submit" className="button button--danger" disabled={pending}>
          {pending ? "Applying…" : "Apply retention now"}
        </button>
      </div>
    </form>
  );
}

export function ApplyTaskRetentionForm({ defaultDays }: { defaultDays: number }) {
  const { state, pending, onSubmit } = useRetentionForm(applyTaskRetentionAction);
  const daysError = fieldError(state, "days");
  const confirmError = fieldError(state, "confirm");
  return (
    <form onSubmit={onSubmit} className="retention-form" aria-label="Delete finished tasks' data now">
      <MessageAnswer state={state} />
      <div className="retention-form__row">
        <Field
          id="task-retention-days"
          label="Delete finished tasks quiet for (days)"
          error={daysError}
          hint="Counted from the task's last activity: its last move, its effects, alerts, messages and audit entries."
        >
          <input
            id="task-retention-days"
            name="days"
            type="number"
            min={1}
            max={36500}
            step={1}
            defaultValue={defaultDays}
            required
            aria-invalid={daysError ? true : undefined}
          />
        </Field>
      </div>
      <div className="field">
        <label className="retention-check">
          <input name="confirm" type="checkbox" value="yes" aria-invalid={confirmError ? true : undefined} />
          <span>
            I understand that each finished task old enough and under no legal hold is deleted for good from every store
            — its transitions, checkpoints, executions, reviews, instructions, alerts, messages and audit chains — in
            one transaction, its audit streams left at recorded anchors.
          </span>
        </label>
        {confirmError ? (
          <p className="field-error" role="alert">
            {confirmError}
          </p>
        ) : null}
      </div>
      <div className="button-row">
        <button type="submit" className="button button--danger" disabled={pending}>
          {pending ? "Deleting…" : "Delete finished tasks' data now"}
        </button>
      </div>
    </form>
  );
}

/**
 * Sets one data class's term. The version the page showed for the chosen
 * class goes with it (compare-and-swap): if someone changed that class since,
 * nothing is changed and the answer says so.
 */
export function SetRetentionTermForm({
  classes,
  terms,
  versions,
}: {
  classes: readonly DataClass[];
  terms: Record<DataClass, number | null>;
  versions: Record<DataClass, number>;
}) {
  const { state, pending, onSubmit } = useRetentionForm(setRetentionTermAction);
  const [dataClass, setDataClass] = useState<DataClass>(classes[classes.length - 1] ?? "restricted");
  const daysError = fieldError(state, "keep_days");
  return (
    <form onSubmit={onSubmit} className="retention-form" aria-label="Set a data class's term">
      <MessageAnswer state={state} />
      <input type="hidden" name="expected_version" value={versions[dataClass]} />
      <div className="retention-form__row">
        <Field id="term-class" label="Data class">
          <select
            id="term-class"
            name="data_class"
            value={dataClass}
            onChange={(e) => setDataClass(e.currentTarget.value as DataClass)}
          >
            {classes.map((c) => (
              <option key={c} value={c}>
                {c} (now {terms[c] === null ? "forever" : `${terms[c]} days`})
              </option>
            ))}
          </select>
        </Field>
        <Field
          id="term-days"
          label="Keep for (days)"
          error={daysError}
          hint="1 to 36,500 days after a finished task's last activity. Leave empty to keep this class forever."
        >
          <input
            id="term-days"
            key={dataClass}
            name="keep_days"
            type="text"
            inputMode="numeric"
            autoComplete="off"
            defaultValue={terms[dataClass] ?? ""}
            aria-describedby="term-days-hint"
            aria-invalid={daysError ? true : undefined}
          />
        </Field>
      </div>
      <div className="button-row">
        <button type="submit" className="button button--primary" disabled={pending}>
          {pending ? "Saving…" : "Set the term"}
        </button>
      </div>
    </form>
  );
}
