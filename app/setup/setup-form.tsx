"use client";

import Link from "next/link";
import type { FormEvent } from "react";
import { completeSetupAction } from "@/app/setup/actions";
import { idlePeopleForm, type PeopleFormState } from "@/lib/adapters/console/people/people-form";
import { useServerActionForm } from "@/components/server-action-form";
import { PeopleAnswer } from "@/components/people/people-forms";

const lostAnswer: PeopleFormState = {
  status: "error",
  message: "The server's answer was lost. Reload this page: if the link is used up, the admin was created.",
};

export function SetupForm({ token }: { token: string }) {
  const { state, pending, submit } = useServerActionForm(completeSetupAction, idlePeopleForm, { lostAnswer });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    submit(event.currentTarget, (event.nativeEvent as SubmitEvent).submitter);
  };
  if (state.status === "done")
    return (
      <div className="notice notice--success" role="status">
        <p>{state.message}</p>
        <p>
          <Link href="/login?callbackUrl=%2Fadmin%2Fpeople">Sign in</Link> to create everyone else.
        </p>
      </div>
    );
  return (
    <form onSubmit={onSubmit} aria-label="Create the first admin">
      <PeopleAnswer state={state} />
      <input type="hidden" name="token" value={token} />
      <div className="field">
        <label htmlFor="setup-username">Username</label>
        <input
          id="setup-username"
          type="text"
          name="username"
          required
          autoComplete="username"
          spellCheck={false}
          maxLength={64}
        />
      </div>
      <div className="field">
        <label htmlFor="setup-display-name">Display name</label>
        <input id="setup-display-name" type="text" name="displayName" required autoComplete="name" maxLength={100} />
      </div>
      <div className="field">
        <label htmlFor="setup-password">Password (at least 12 characters)</label>
        <input
          id="setup-password"
          name="password"
          type="password"
          required
          minLength={12}
          autoComplete="new-password"
        />
      </div>
      <div className="field">
        <label htmlFor="setup-confirm">Password again</label>
        <input id="setup-confirm" name="confirm" type="password" required minLength={12} autoComplete="new-password" />
      </div>
      <div className="button-row">
        <button type="submit" className="button button--primary" disabled={pending}>
          {pending ? "Creating…" : "Create the admin"}
        </button>
      </div>
    </form>
  );
}
