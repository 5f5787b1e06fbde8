"use client";

import { useId, useRef, useState, type FormEvent } from "react";
import { addInstructionAction } from "@/app/(console)/tasks/[id]/instruction-actions";
import {
  idleInstructionForm,
  instructionTextMaxLength,
  knownInstructionTopics,
  type InstructionFormState,
} from "@/components/instructions/form-state";
import { useServerActionForm } from "@/components/server-action-form";

const lostAnswer: InstructionFormState = {
  status: "error",
  message:
    "No answer from the server: the instruction may or may not be recorded. The ledger above shows what is; submitting again is safe (same instruction id).",
  details: [],
};

/** Adds an instruction at the ledger seq the page shows; what was typed survives a conflict. */
export function InstructionForm({
  taskId,
  expectedSeq,
  instructionId,
  isPerson,
}: {
  taskId: string;
  expectedSeq: number;
  instructionId: string;
  isPerson: boolean;
}) {
  const id = useId();
  const [text, setText] = useState("");
  const [textError, setTextError] = useState<string | null>(null);
  const textRef = useRef<HTMLTextAreaElement>(null);
  const { state, pending, submit } = useServerActionForm(addInstructionAction, idleInstructionForm, {
    lostAnswer,
    onDone: () => setText(""),
  });

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!text.trim()) {
      setTextError("Write the instruction: its words are what people and agents will read.");
      textRef.current?.focus();
      return;
    }
    setTextError(null);
    submit(event.currentTarget, (event.nativeEvent as SubmitEvent).submitter as HTMLElement | null);
  }

  return (
    <form className="instr-form" onSubmit={onSubmit} noValidate aria-busy={pending} aria-labelledby={`${id}-heading`}>
      <h3 id={`${id}-heading`}>Add an instruction</h3>
      <Feedback state={state} />
      <input type="hidden" name="taskId" value={taskId} />
      <input type="hidden" name="expectedSeq" value={expectedSeq} />
      <input type="hidden" name="instructionId" value={instructionId} />
      <div className="instr-form__row">
        <div className="field">
          <label htmlFor={`${id}-topic`}>Topic</label>
          <input
            id={`${id}-topic`}
            type="text"
            name="topic"
            list={`${id}-topics`}
            defaultValue="refund"
            required
            pattern="[a-z][a-z0-9_.\-]{0,63}"
            autoComplete="off"
          />
          <datalist id={`${id}-topics`}>
            {knownInstructionTopics.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </div>
        <div className="field">
          <label htmlFor={`${id}-directive`}>Directive</label>
          <select id={`${id}-directive`} name="directive" defaultValue="forbid">
            <option value="forbid">forbid</option>
            <option value="allow">allow</option>
            <option value="note">note (decides nothing)</option>
          </select>
        </div>
        {isPerson ? (
          <div className="field">
            <label htmlFor={`${id}-source`}>Whose words</label>
            <select id={`${id}-source`} name="source" defaultValue="operator">
              <option value="operator">mine (operator)</option>
              <option value="user">the requester&apos;s</option>
            </select>
          </div>
        ) : null}
      </div>
      <div className="field">
        <label htmlFor={`${id}-text`}>Instruction (required)</label>
        <textarea
          id={`${id}-text`}
          ref={textRef}
          name="text"
          rows={2}
          maxLength={instructionTextMaxLength}
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="e.g. Do not issue refund"
          aria-invalid={textError ? true : undefined}
          aria-describedby={textError ? `${id}-error` : `${id}-hint`}
        />
        {textError ? (
          <p id={`${id}-error`} className="field-error" role="alert">
            {textError}
          </p>
        ) : (
          <p id={`${id}-hint`} className="hint">
            The latest allow or forbid on a topic supersedes the older ones. A refund relying on a superseded
            instruction is frozen for review, never sent.
          </p>
        )}
      </div>
      <button type="submit" className="button button--primary button--small" disabled={pending}>
        {pending ? "Recording…" : "Add instruction"}
      </button>
    </form>
  );
}

function Feedback({ state }: { state: InstructionFormState }) {
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
          {state.latest ? (
            <p>
              Added meanwhile: #{state.latest.seq} <strong>{state.latest.directive}</strong> on{" "}
              <span className="mono">{state.latest.topic}</span>: “{state.latest.text}” (by {state.latest.issuedBy})
            </p>
          ) : null}
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
