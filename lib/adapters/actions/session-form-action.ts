import { refresh } from "next/cache";
import type { z } from "zod";
import {
  runFormAction,
  type FormAction,
  type FormActionDeps,
  type FormActionSpec,
  type FormState,
} from "@/lib/adapters/actions/form-action";
import { requireSessionPermission } from "@/lib/adapters/auth/session";

const sessionDeps: FormActionDeps = { authorize: requireSessionPermission, refresh };

/**
 * A console form's server action, as `useActionState` calls it: export it
 * from a "use server" file, typed by its state:
 * `export const fooAction: FormAction<FooFormState> = sessionFormAction({…})`
 * (the annotation is what types the words each callback returns).
 * The caller is the signed-in person, re-read and checked on every call.
 */
export function sessionFormAction<S extends z.ZodType, State extends FormState>(
  spec: FormActionSpec<S, State>,
): FormAction<State> {
  return async (_previous, formData) => runFormAction(spec, formData, sessionDeps);
}
