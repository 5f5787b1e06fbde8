"use server";

import { z } from "zod";
import type { PeopleFormState } from "@/lib/adapters/console/people/people-form";
import { isAppError } from "@/lib/core/errors";
import { completeFirstAdminSetup } from "@/lib/use-cases/people/complete-first-admin-setup";
import { getDb } from "@/lib/db/client";

const SetupFormSchema = z.object({
  token: z.string().default(""),
  username: z.string().default(""),
  displayName: z.string().default(""),
  password: z.string().default(""),
  confirm: z.string().default(""),
});

/**
 * The one server action a caller without a session may use: the setup
 * link is its credential, checked (unused, unexpired, no accounts yet) and
 * used up by completeFirstAdminSetup in one transaction. Next checks that
 * a server action's Origin is this site's, so a cross-site form cannot
 * submit it.
 */
export async function completeSetupAction(_previous: PeopleFormState, formData: FormData): Promise<PeopleFormState> {
  const form = SetupFormSchema.parse(Object.fromEntries(formData));
  if (form.password !== form.confirm) return { status: "error", message: "The two passwords differ: type them again." };
  try {
    const admin = await completeFirstAdminSetup(getDb(), {
      token: form.token,
      username: form.username,
      display_name: form.displayName,
      password: form.password,
    });
    return { status: "done", message: `${admin.displayName} (${admin.username}) is this deployment's first admin.` };
  } catch (error) {
    if (!isAppError(error)) throw error;
    return { status: "error", message: error.message };
  }
}
