import type { z } from "zod";
import { actorOf, type Permission, type Principal } from "@/lib/model/permissions";
import type { Actor } from "@/lib/model/actor";
import { isAppError, type AppError } from "@/lib/core/errors";

/**
 * The one path of a console form's server action: who (the session) → may
 * they (the permission, checked on the server whatever the page showed) →
 * what (a zod parse of the form) → the domain function → its answer, or its
 * AppError, as the form's state in words. Knows neither React nor Next: the
 * session and the page refresh come in as `FormActionDeps`
 * (lib/adapters/actions/session-form-action.ts binds the real ones), so every path
 * here is unit-tested without a server.
 *
 * What varies between forms is a parameter: the state's shape
 * (`errorState`), what "nothing was …" says (changed, recorded, decided),
 * the words for a form that does not parse, and `answer`, the action's own
 * words for the codes it knows better — a conflict above all, which each
 * form says its own way.
 */

/** Every console form's state says first what happened: done, conflict, error (or idle, before any submit). */
export interface FormState {
  status: string;
}

/** A server action as `useActionState` calls it. */
export type FormAction<State> = (previous: State, formData: FormData) => Promise<State>;

export interface FormActionDeps {
  /** The signed-in person holding `permission`, or throws the AppError (unauthenticated, forbidden); a refusal is recorded. */
  authorize(permission: Permission, where: string): Promise<Principal>;
  /** A fresh render of the page the form is on, so it shows what is true now. */
  refresh(): void;
}

export interface FormActionContext {
  principal: Principal;
  actor: Actor;
}

/**
 * What one form's action is made of. `State` is never inferred from the
 * callbacks (NoInfer): it comes from the action's declared type, so each
 * callback's object literals are checked against the form's state union.
 */
export interface FormActionSpec<S extends z.ZodType, State extends FormState> {
  /** The action's name: a refusal is recorded as `action <name>`. */
  name: string;
  permission: Permission;
  /** Parses `Object.fromEntries(formData)`. */
  schema: S;
  /** The form's error state, in its own shape, for a message (and the error it came from, for details). */
  errorState(message: string, error?: AppError): NoInfer<State>;
  /** The state for a form that does not parse; by default the first issue's message. */
  invalid?(issues: readonly z.core.$ZodIssue[]): NoInfer<State>;
  /** Calls the domain function and says what happened; a check of its own may answer an error state (no refresh follows). */
  run(input: z.output<S>, context: FormActionContext): Promise<NoInfer<State>>;
  /**
   * The action's own words for an AppError the call threw: undefined leaves
   * it to the standard words (session ended, not allowed, the error's message).
   */
  answer?(
    error: AppError,
    context: FormActionContext & { input: z.output<S> },
  ): NoInfer<State> | undefined | Promise<NoInfer<State> | undefined>;
  /** Ends "nothing was …" in the standard refusals: "changed" unless said otherwise. */
  nothingWas?: string;
  /** A read (a verification, a dry run): no refresh after it. A write refreshes after it succeeds. */
  readOnly?: boolean;
  /** Errors after which the page is refreshed too; a version conflict always is, so the page shows what won. */
  refreshAfter?(error: AppError): boolean;
}

export const formIncompleteMessage = "The form was incomplete; reload the page and try again.";

export function sessionEndedMessage(nothingWas = "changed"): string {
  return `Your session has ended. Sign in again; nothing was ${nothingWas}.`;
}

export function notAllowedMessage(error: AppError, nothingWas = "changed"): string {
  return `Not allowed: ${error.message} Nothing was ${nothingWas}.`;
}

/** The first issue's own message: the schemas word the fields a person fills in. */
export function firstIssueMessage(issues: readonly z.core.$ZodIssue[]): string {
  return issues[0]?.message ?? formIncompleteMessage;
}

export async function runFormAction<S extends z.ZodType, State extends FormState>(
  spec: FormActionSpec<S, State>,
  formData: FormData,
  deps: FormActionDeps,
): Promise<State> {
  const nothingWas = spec.nothingWas ?? "changed";
  const standardWords = (error: AppError): State => {
    switch (error.code) {
      case "unauthenticated":
        return spec.errorState(sessionEndedMessage(nothingWas), error);
      case "forbidden":
        return spec.errorState(notAllowedMessage(error, nothingWas), error);
      default:
        return spec.errorState(error.message, error);
    }
  };

  let principal: Principal;
  try {
    principal = await deps.authorize(spec.permission, `action ${spec.name}`);
  } catch (error) {
    if (!isAppError(error)) throw error;
    return standardWords(error);
  }

  const form = spec.schema.safeParse(Object.fromEntries(formData));
  if (!form.success)
    return spec.invalid ? spec.invalid(form.error.issues) : spec.errorState(firstIssueMessage(form.error.issues));

  const context: FormActionContext = { principal, actor: actorOf(principal) };
  try {
    const state = await spec.run(form.data, context);
    // An error state from the action's own check means nothing was called, so nothing changed to show.
    if (!spec.readOnly && state.status !== "error") deps.refresh();
    return state;
  } catch (error) {
    // Anything but an AppError is a bug or an outage: Next's error boundary, not a message.
    if (!isAppError(error)) throw error;
    if (error.code === "version_conflict" || spec.refreshAfter?.(error)) deps.refresh();
    return (await spec.answer?.(error, { ...context, input: form.data })) ?? standardWords(error);
  }
}
