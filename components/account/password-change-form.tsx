"use client";

import Link from "next/link";
import type { FormEvent } from "react";
import { changePasswordAction } from "@/app/(console)/account/actions";
import { idlePasswordForm, type PasswordFormState } from "@/lib/adapters/console/account/password-form";
import type { PasswordChangeField } from "@/lib/model/people/password-change";
import { useServerActionForm } from "@/components/server-action-form";

const lostAnswer: PasswordFormState = {
  status: "error",
  message:
    "The server's answer was lost. The page was reloaded: if your password changed, the new one works; otherwise try again.",
  fields: {},
};

function PasswordField({
  name,
  label,
  hint,
  autoComplete,
  state,
}: {
  name: PasswordChangeField;
  label: string;
  hint?: string;
  autoComplete: "current-password" | "new-password";
  state: PasswordFormState;
}) {
  const id = `account-${name.replace("_", "-")}`;
  const error = state.status === "error" ? state.fields[name] : undefined;
  const describedBy = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(" ");
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        type="password"
        required
        maxLength={1024}
        autoComplete={autoComplete}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy || undefined}
      />
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** Current, new, and the new once more: refusals keep what was typed and name the field at fault. */
export function PasswordChangeForm({ oneTime }: { oneTime: boolean }) {
  const form = useServerActionForm(changePasswordAction, idlePasswordForm, { lostAnswer });
  const { state, pending } = form;
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    form.submit(event.currentTarget, (event.nativeEvent as SubmitEvent).submitter);
  };
  if (state.status === "done")
    return (
      <div className="notice notice--success" role="status" data-testid="password-changed">
        <p>{state.message}</p>
        <p>
          <Link href="/tasks">Continue to the tasks</Link>
        </p>
      </div>
    );
  return (
    <form onSubmit={onSubmit} aria-label="Change your password" className="account-form" noValidate>
      {state.status === "error" ? (
        <div className="notice notice--error" role="alert">
          {state.message}
        </div>
      ) : null}
      <PasswordField
        name="current_password"
        label={oneTime ? "One-time password" : "Current password"}
        hint={oneTime ? "The password you just signed in with." : undefined}
        autoComplete="current-password"
        state={state}
      />
      <PasswordField
        name="new_password"
        label="New password"
        hint="At least 12 characters; not your username, not the current password. A few unrelated words make a good one."
        autoComplete="new-password"
        state={state}
      />
      <PasswordField name="confirm_password" label="New password again" autoComplete="new-password" state={state} />
      <div className="button-row">
        <button type="submit" className="button button--primary" disabled={pending}>
          {pending ? "Changing…" : "Change password"}
        </button>
      </div>
    </form>
  );
}
