"use client";

import type { Ref } from "react";

/**
 * A required reason, as the console's decision forms ask for one: the
 * label says it is required, an empty submit is answered beside the field
 * (and the field focused) before anything is sent, and the hint says where
 * the reason will be recorded.
 */
export function RequiredReasonField({
  id,
  value,
  onChange,
  error,
  hint,
  maxLength,
  rows = 3,
  inputRef,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  /** Why the last submit was stopped, or null. */
  error: string | null;
  hint: string;
  maxLength: number;
  rows?: number;
  inputRef?: Ref<HTMLTextAreaElement>;
}) {
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>Reason (required)</label>
      <textarea
        id={id}
        ref={inputRef}
        name="reason"
        rows={rows}
        maxLength={maxLength}
        required
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${errorId} ${hintId}` : hintId}
      />
      {error ? (
        <p id={errorId} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <p id={hintId} className="hint">
        {hint}
      </p>
    </div>
  );
}
