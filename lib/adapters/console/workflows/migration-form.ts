/**
 * What the migration page's server actions answer, shared with the form that
 * calls them (no server imports here). A plan is a dry run per task; its
 * confirmation names the task versions the plan saw, so a task that moved
 * since is refused as stale rather than migrated over newer state.
 */

/** Each form field `map:<state>` names the state of the newer version a task in `<state>` moves to. */
export const mappingFieldPrefix = "map:";

/** Each field `task:<id>` of a confirmation carries the task version the plan saw. */
export const taskFieldPrefix = "task:";

/** What "leave tasks in this state where they are" posts. */
export const notMapped = "";

export interface MigrationTaskPlanView {
  taskId: string;
  /** The task version the plan saw: a confirmation applies only at this version. */
  version: number;
  from: string;
  /** The state it would have under the newer version; null when the mapping leaves this state out. */
  to: string | null;
  allowed: boolean;
  /** Why not, in words, each naming the rule it would break. */
  reasons: string[];
}

export interface MigrationPlanView {
  name: string;
  fromVersion: number;
  toVersion: number;
  /** The mapping the plan was made with, in the older version's state order. */
  mapping: Array<{ from: string; to: string | null }>;
  tasks: MigrationTaskPlanView[];
}

export type MigrationPlanFormState =
  | { status: "idle" }
  | { status: "done"; plan: MigrationPlanView; plannedAt: string }
  | { status: "error"; message: string };

export const idleMigrationPlan: MigrationPlanFormState = { status: "idle" };

export type MigrationTaskOutcome = "moved" | "refused";

export interface MigrationTaskResultView {
  taskId: string;
  outcome: MigrationTaskOutcome;
  /** What happened, in words: the new version and state, or the refusal and why. */
  message: string;
}

export type MigrationApplyFormState =
  | { status: "idle" }
  | { status: "done"; message: string; results: MigrationTaskResultView[] }
  | { status: "error"; message: string };

export const idleMigrationApply: MigrationApplyFormState = { status: "idle" };

export const migrationReasonMaxLength = 500;

export const lostMigrationAnswer =
  "No answer from the server, so the migration may or may not have been applied. The page shows each task's version as soon as the server answers; plan again to see where the tasks are now.";

/** The mapping posted by the form: `map:<state>` fields, an empty value meaning "not moved". */
export function mappingFromForm(fields: Record<string, unknown>): Record<string, string> {
  const mapping: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields))
    if (key.startsWith(mappingFieldPrefix) && typeof value === "string" && value !== notMapped)
      mapping[key.slice(mappingFieldPrefix.length)] = value;
  return mapping;
}

/** The default mapping: each state of the older version to the newer one's state of the same name, if it has one. */
export function defaultMapping(fromStates: readonly string[], toStates: readonly string[]): Record<string, string> {
  return Object.fromEntries(fromStates.filter((s) => toStates.includes(s)).map((s) => [s, s]));
}

/** The plan's tasks a confirmation posts (`task:<id>` = the version the plan saw); a malformed version is left out. */
export function plannedTasksFromForm(fields: Record<string, unknown>): Array<{ taskId: string; version: number }> {
  const tasks: Array<{ taskId: string; version: number }> = [];
  for (const [key, value] of Object.entries(fields))
    if (key.startsWith(taskFieldPrefix) && typeof value === "string" && /^[1-9][0-9]{0,9}$/.test(value))
      tasks.push({ taskId: key.slice(taskFieldPrefix.length), version: Number(value) });
  return tasks;
}
