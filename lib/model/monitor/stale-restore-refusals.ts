/**
 * Refusals that mean someone tried to put an older snapshot over newer or
 * finished state: the checkpoint predates the committed version and no
 * rewind was chosen, the plan was made at a version the task has left, or
 * the task has ended. `corrupt` is its own kind. The other refusals are the
 * restore's safety rules doing their job on a question, not stale data:
 * `diverged`, `unreconciled` and `awaiting_human` are already an alert, an
 * unknown outcome or a review of their own; `current`, `incompatible` and
 * `invalid_state` are nothing to restore or a workflow change.
 */
export const staleRestoreRefusals: ReadonlySet<string> = new Set(["stale", "version_conflict", "terminal"]);
