/**
 * What the people page's and the setup page's server actions answer (no
 * server imports, shared with the forms). A created person's initial
 * password, and a reset's one-time password, travel only in this answer:
 * shown once, never stored in clear.
 */
export type PeopleFormState =
  | { status: "idle" }
  | { status: "done"; message: string; initialPassword?: string; oneTimePassword?: string }
  | { status: "conflict"; message: string }
  | { status: "error"; message: string };

export const idlePeopleForm: PeopleFormState = { status: "idle" };
