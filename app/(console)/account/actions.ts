"use server";

import { refresh } from "next/cache";
import { getConsoleSession, consoleDb } from "@/lib/adapters/auth/session";
import { sessionEndedMessage } from "@/lib/adapters/actions/form-action";
import { passwordFormError, type PasswordFormState } from "@/lib/adapters/console/account/password-form";
import { isAppError } from "@/lib/core/errors";
import { actorOf } from "@/lib/model/permissions";
import { changeOwnPassword } from "@/lib/use-cases/people/change-own-password";

/**
 * The one server action a person holding a one-time password may call, so
 * it is not a sessionFormAction (whose session check refuses them): it asks
 * the session itself, and changes only the caller's own password, verified
 * by the current one. The session it came from stays open.
 */
export async function changePasswordAction(
  _previous: PasswordFormState,
  formData: FormData,
): Promise<PasswordFormState> {
  const session = await getConsoleSession();
  if (!session) return { status: "error", message: sessionEndedMessage(), fields: {} };
  const text = (name: string) => {
    const value = formData.get(name);
    return typeof value === "string" ? value : "";
  };
  try {
    const { sessionsEnded } = await changeOwnPassword(
      await consoleDb(),
      {
        userId: session.principal.id,
        sessionId: session.sessionId,
        change: {
          current_password: text("current_password"),
          new_password: text("new_password"),
          confirm_password: text("confirm_password"),
        },
      },
      actorOf(session.principal),
    );
    refresh();
    const others =
      sessionsEnded === 0
        ? "You had no other open sessions."
        : `Your ${sessionsEnded === 1 ? "other open session has" : `${sessionsEnded} other open sessions have`} ended.`;
    return { status: "done", message: `Your password is changed. ${others} This browser stays signed in.` };
  } catch (error) {
    if (!isAppError(error)) throw error;
    return passwordFormError(error);
  }
}
