"use server";

import { z } from "zod";
import type { FormAction, FormActionSpec } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import type { PeopleFormState } from "@/lib/adapters/console/people/people-form";
import type { AppError } from "@/lib/core/errors";
import type { PersonRole } from "@/lib/model/people/person-fields";
import { changePersonRole } from "@/lib/use-cases/people/change-person-role";
import { createPerson } from "@/lib/use-cases/people/create-person";
import { disablePerson } from "@/lib/use-cases/people/disable-person";
import { enablePerson } from "@/lib/use-cases/people/enable-person";
import { resetPersonPassword } from "@/lib/use-cases/people/reset-person-password";
import { consoleDb } from "@/lib/adapters/auth/session";

/**
 * The people page's writes. Each checks people:manage itself (the page
 * showing a form proves nothing about who submits it); the use cases judge
 * the fields (their words name them) and record the audit entry in the
 * same transaction. Every change but a creation ends the person's sessions.
 */

const peopleForm = {
  permission: "people:manage",
  errorState: (message: string): PeopleFormState => ({ status: "error", message }),
  // An "already so" answer means someone else changed the person first: the page shows what is true now.
  answer: (error: AppError) =>
    error.code === "version_conflict" ? { status: "conflict", message: error.message } : undefined,
} satisfies Partial<FormActionSpec<z.ZodType, PeopleFormState>>;

const CreatePersonFormSchema = z.object({
  username: z.string().default(""),
  displayName: z.string().default(""),
  role: z.string().default(""),
});

export const createPersonAction: FormAction<PeopleFormState> = sessionFormAction({
  ...peopleForm,
  name: "createPersonAction",
  schema: CreatePersonFormSchema,
  async run({ username, displayName, role }, { actor }) {
    const { person, initialPassword } = await createPerson(
      await consoleDb(),
      { username, display_name: displayName, role: role as PersonRole },
      actor,
      "console",
    );
    return {
      status: "done",
      message: `${person.displayName} (${person.username}) can sign in as ${person.role} with this initial password, and must then choose their own. It is shown only now: hand it over privately.`,
      initialPassword: initialPassword ?? undefined,
    };
  },
});

const PersonFormSchema = z.object({ userId: z.string().min(1) });

export const changeRoleAction: FormAction<PeopleFormState> = sessionFormAction({
  ...peopleForm,
  name: "changeRoleAction",
  schema: PersonFormSchema.extend({ role: z.string().default("") }),
  async run({ userId, role }, { actor }) {
    const person = await changePersonRole(await consoleDb(), userId, role as PersonRole, actor);
    return {
      status: "done",
      message: `${person.username} is now ${person.role}; their open sessions have ended.`,
    };
  },
});

export const disablePersonAction: FormAction<PeopleFormState> = sessionFormAction({
  ...peopleForm,
  name: "disablePersonAction",
  schema: PersonFormSchema,
  async run({ userId }, { actor }) {
    const person = await disablePerson(await consoleDb(), userId, actor);
    return {
      status: "done",
      message: `${person.username} is disabled: they cannot sign in and their open sessions have ended.`,
    };
  },
});

export const enablePersonAction: FormAction<PeopleFormState> = sessionFormAction({
  ...peopleForm,
  name: "enablePersonAction",
  schema: PersonFormSchema,
  async run({ userId }, { actor }) {
    const person = await enablePerson(await consoleDb(), userId, actor);
    return { status: "done", message: `${person.username} may sign in again.` };
  },
});

export const resetPasswordAction: FormAction<PeopleFormState> = sessionFormAction({
  ...peopleForm,
  name: "resetPasswordAction",
  schema: PersonFormSchema,
  async run({ userId }, { actor }) {
    const { person, oneTimePassword, sessionsEnded } = await resetPersonPassword(
      await consoleDb(),
      userId,
      actor,
      "console",
    );
    const sessions = sessionsEnded === 1 ? "1 open session" : `${sessionsEnded} open sessions`;
    return {
      status: "done",
      message: `${person.username} has a new one-time password (${sessions} ended). It is shown only now: hand it over privately; they choose their own at their next sign-in.`,
      oneTimePassword,
    };
  },
});
