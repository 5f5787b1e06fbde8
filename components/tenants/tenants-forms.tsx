"use client";

import type { FormEvent } from "react";
import {
  onboardTenantAction,
  reactivateTenantAction,
  suspendTenantAction,
} from "@/app/(console)/platform/tenants/actions";
import { idleTenantsForm, type TenantsFormState } from "@/lib/adapters/console/tenants/tenants-form";
import { MessageAnswer, useServerActionForm } from "@/components/server-action-form";

const lostAnswer: TenantsFormState = {
  status: "error",
  message: "The server's answer was lost. The page was reloaded: check the list for what happened before trying again.",
};

function useTenantsForm(action: (previous: TenantsFormState, formData: FormData) => Promise<TenantsFormState>) {
  const form = useServerActionForm(action, idleTenantsForm, { lostAnswer });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    form.submit(event.currentTarget, (event.nativeEvent as SubmitEvent).submitter);
  };
  return { ...form, onSubmit };
}

function TenantsAnswer({ state }: { state: TenantsFormState }) {
  return (
    <MessageAnswer
      state={state}
      shownOnce={
        state.status === "done" && state.initialPassword ? (
          <p>
            Initial password: <code data-testid="initial-password">{state.initialPassword}</code>
          </p>
        ) : null
      }
    />
  );
}

/**
 * A tenant and its first admin in one form. The fields are judged on the
 * server (its words name them), so nothing is marked required here that the
 * browser would refuse in words of its own.
 */
export function OnboardTenantForm() {
  const { state, pending, onSubmit } = useTenantsForm(onboardTenantAction);
  return (
    <form onSubmit={onSubmit} aria-label="Open a tenant" className="tenants-form">
      <TenantsAnswer state={state} />
      <fieldset className="tenants-form__group">
        <legend>The tenant</legend>
        <div className="people-form__row">
          <div className="field">
            <label htmlFor="tenant-id">Tenant id</label>
            <input
              id="tenant-id"
              type="text"
              name="tenantId"
              aria-required="true"
              aria-describedby="tenant-id-hint"
              autoComplete="off"
              spellCheck={false}
              maxLength={63}
            />
            <p className="hint" id="tenant-id-hint">
              Lowercase letters, digits and dashes; it cannot change later.
            </p>
          </div>
          <div className="field">
            <label htmlFor="tenant-name">Name</label>
            <input id="tenant-name" type="text" name="name" aria-required="true" maxLength={200} autoComplete="off" />
          </div>
        </div>
      </fieldset>
      <fieldset className="tenants-form__group">
        <legend>Its first admin</legend>
        <div className="people-form__row">
          <div className="field">
            <label htmlFor="tenant-admin-username">Admin username</label>
            <input
              id="tenant-admin-username"
              type="text"
              name="adminUsername"
              aria-required="true"
              autoComplete="off"
              spellCheck={false}
              maxLength={64}
            />
          </div>
          <div className="field">
            <label htmlFor="tenant-admin-display-name">Admin display name</label>
            <input
              id="tenant-admin-display-name"
              type="text"
              name="adminDisplayName"
              aria-required="true"
              maxLength={100}
              autoComplete="off"
            />
          </div>
        </div>
      </fieldset>
      <p className="hint">
        Verity generates the admin&apos;s initial password and shows it once, here; they replace it at their first
        sign-in, then create their tenant&apos;s people and agents.
      </p>
      <div className="button-row">
        <button type="submit" className="button button--primary" disabled={pending}>
          {pending ? "Opening…" : "Open tenant"}
        </button>
      </div>
    </form>
  );
}

/** Suspend (or reactivate) with a reason, recorded in the tenant's own audit chain. */
export function TenantStatusControl({ tenantId, status }: { tenantId: string; status: "active" | "suspended" }) {
  const suspending = status === "active";
  const { state, pending, onSubmit } = useTenantsForm(suspending ? suspendTenantAction : reactivateTenantAction);
  const verb = suspending ? "Suspend" : "Reactivate";
  const reasonId = `tenant-reason-${tenantId}`;
  return (
    <div className="tenants-control">
      <TenantsAnswer state={state} />
      <form onSubmit={onSubmit} aria-label={`${verb} tenant ${tenantId}`} className="tenants-control__row">
        <input type="hidden" name="tenantId" value={tenantId} />
        <label htmlFor={reasonId} className="visually-hidden">
          Reason to {verb.toLowerCase()} {tenantId} (required)
        </label>
        <input
          id={reasonId}
          type="text"
          name="reason"
          aria-required="true"
          placeholder="Reason (required)"
          maxLength={500}
          autoComplete="off"
        />
        <button
          type="submit"
          className={suspending ? "button button--small button--danger" : "button button--small"}
          disabled={pending}
        >
          {pending ? `${verb.replace(/e$/, "")}ing…` : verb}
        </button>
      </form>
    </div>
  );
}
