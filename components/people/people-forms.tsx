"use client";

import { useEffect, useRef, useState, type FormEvent } from "react";
import {
  changeRoleAction,
  createPersonAction,
  disablePersonAction,
  enablePersonAction,
  resetPasswordAction,
} from "@/app/(console)/admin/people/actions";
import { idlePeopleForm, type PeopleFormState } from "@/lib/adapters/console/people/people-form";
import { personRoles } from "@/lib/model/people/person-fields";
import { MessageAnswer, useServerActionForm } from "@/components/server-action-form";

const lostAnswer: PeopleFormState = {
  status: "error",
  message: "The server's answer was lost. The page was reloaded: check the list for what happened before trying again.",
};

function usePeopleForm(action: (previous: PeopleFormState, formData: FormData) => Promise<PeopleFormState>) {
  const form = useServerActionForm(action, idlePeopleForm, { lostAnswer });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    form.submit(event.currentTarget, (event.nativeEvent as SubmitEvent).submitter);
  };
  return { ...form, onSubmit };
}

export function PeopleAnswer({ state }: { state: PeopleFormState }) {
  if (state.status !== "done") return <MessageAnswer state={state} />;
  return (
    <MessageAnswer
      state={state}
      shownOnce={
        <>
          {state.initialPassword ? (
            <p>
              Initial password: <code data-testid="initial-password">{state.initialPassword}</code>
            </p>
          ) : null}
          {state.oneTimePassword ? (
            <p>
              One-time password: <code data-testid="one-time-password">{state.oneTimePassword}</code>
            </p>
          ) : null}
        </>
      }
    />
  );
}

export function CreatePersonForm() {
  const { state, pending, onSubmit } = usePeopleForm(createPersonAction);
  return (
    <form onSubmit={onSubmit} aria-label="Create a person" className="people-form">
      <PeopleAnswer state={state} />
      <div className="people-form__row">
        <div className="field">
          <label htmlFor="person-username">Username</label>
          <input
            id="person-username"
            type="text"
            name="username"
            required
            autoComplete="off"
            spellCheck={false}
            maxLength={64}
          />
        </div>
        <div className="field">
          <label htmlFor="person-display-name">Display name</label>
          <input id="person-display-name" type="text" name="displayName" required maxLength={100} autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="person-role">Role</label>
          <select id="person-role" name="role" defaultValue="operator">
            {personRoles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
      </div>
      <p className="hint">
        Verity generates an initial password and shows it once, here; only its hash is stored. Hand it over privately.
      </p>
      <div className="button-row">
        <button type="submit" className="button button--primary" disabled={pending}>
          {pending ? "Creating…" : "Create person"}
        </button>
      </div>
    </form>
  );
}

export function PersonControls({
  userId,
  username,
  role,
  disabled,
  canResetPassword,
}: {
  userId: string;
  username: string;
  role: string;
  disabled: boolean;
  /** A password account that is not the admin's own (theirs is changed at /account). */
  canResetPassword: boolean;
}) {
  const roleForm = usePeopleForm(changeRoleAction);
  const statusForm = usePeopleForm(disabled ? enablePersonAction : disablePersonAction);
  const resetForm = usePeopleForm(resetPasswordAction);
  // The reset's answer carries the one-time password: it stays on top until something else is answered after it.
  const state =
    resetForm.state.status !== "idle"
      ? resetForm.state
      : statusForm.state.status !== "idle"
        ? statusForm.state
        : roleForm.state;
  return (
    <div className="people-controls">
      <PeopleAnswer state={state} />
      <form onSubmit={roleForm.onSubmit} aria-label={`Change the role of ${username}`} className="people-controls__row">
        <input type="hidden" name="userId" value={userId} />
        <label htmlFor={`role-${userId}`} className="visually-hidden">
          Role of {username}
        </label>
        <select id={`role-${userId}`} name="role" defaultValue={role}>
          {personRoles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <button type="submit" className="button button--small" disabled={roleForm.pending}>
          {roleForm.pending ? "Saving…" : "Change role"}
        </button>
      </form>
      <form onSubmit={statusForm.onSubmit} aria-label={`${disabled ? "Enable" : "Disable"} ${username}`}>
        <input type="hidden" name="userId" value={userId} />
        <button
          type="submit"
          className={disabled ? "button button--small" : "button button--small button--danger"}
          disabled={statusForm.pending}
        >
          {disabled ? "Enable" : "Disable"}
        </button>
      </form>
      {canResetPassword ? <ResetPasswordControl userId={userId} username={username} form={resetForm} /> : null}
    </div>
  );
}

/**
 * Reset password…, then a question naming what it does: the person's
 * sessions end at once and their current password stops working.
 */
function ResetPasswordControl({
  userId,
  username,
  form,
}: {
  userId: string;
  username: string;
  form: ReturnType<typeof usePeopleForm>;
}) {
  const [confirming, setConfirming] = useState(false);
  const confirmButton = useRef<HTMLButtonElement>(null);
  const resetButton = useRef<HTMLButtonElement>(null);
  const wasConfirming = useRef(false);
  // Keyboard focus follows the question: onto it when asked, back to Reset password… when it closes.
  useEffect(() => {
    if (confirming) confirmButton.current?.focus();
    else if (wasConfirming.current) resetButton.current?.focus();
    wasConfirming.current = confirming;
  }, [confirming]);
  if (!confirming)
    return (
      <button
        ref={resetButton}
        type="button"
        className="button button--small people-controls__reset"
        disabled={form.pending}
        onClick={() => setConfirming(true)}
      >
        {form.pending ? "Resetting…" : "Reset password…"}
      </button>
    );
  return (
    <form
      onSubmit={(e) => {
        form.onSubmit(e);
        setConfirming(false);
      }}
      aria-label={`Reset the password of ${username}`}
      className="people-controls__confirm"
    >
      <input type="hidden" name="userId" value={userId} />
      <p>
        Give <code>{username}</code> a new one-time password? Their current password stops working and their open
        sessions end now.
      </p>
      <div className="button-row">
        <button ref={confirmButton} type="submit" className="button button--small button--danger">
          Reset password
        </button>
        <button type="button" className="button button--small" onClick={() => setConfirming(false)}>
          Keep it
        </button>
      </div>
    </form>
  );
}
