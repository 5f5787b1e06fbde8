import type { Db } from "@/lib/db/client";
import { getTaskVersion } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";

/**
 * A task with a very long history, for the browser test that opens and
 * scrolls a long timeline (VERITY_E2E_LONG_HISTORY, set only by
 * playwright.config.ts, e2e/pages/long-history.ts; never by `npm start`). Every event is a real
 * transition through the engine: an in-place budget update, each its own
 * compare-and-swap with its transition row and audit entry, exactly as an
 * agent reporting its spend makes them. Budget updates cross no checkpoint
 * boundary, so each is the single CAS statement of lib/stores/tasks/task-store.ts.
 *
 * Committing them in batches (transitionTaskInTransaction inside one
 * transaction) was measured and gained nothing on PGlite: the cost is the
 * engine's CPU per transition (validation, digests, the statement), not
 * the commit. So each transition is its own, as in production.
 */
export const LONG_HISTORY_TASK_ID = "e2e-long-history";
export const longHistoryAgent: Actor = { identity: "spiffe://verity.local/agent/long-runner", kind: "agent" };

/**
 * Creates the task, or continues it where a killed start left it: its
 * version says how far it got (creation 1, the three moves 2–4, update i
 * makes 4 + i), and each update's transition id is fixed, so nothing is
 * written twice. Complete once the task has `events` versions.
 */
export async function seedLongHistoryTask(
  db: Db,
  events: number,
  log: (line: string) => void = () => {},
): Promise<{ taskId: string; events: number; ms: number }> {
  const started = performance.now();
  const agent = longHistoryAgent;
  let version =
    (await getTaskVersion(db, LONG_HISTORY_TASK_ID)) ??
    (
      await createTask(
        db,
        {
          workflow: "agent-task",
          task_id: LONG_HISTORY_TASK_ID,
          intent_id: "long-history",
          subtasks: [{ id: "crunch", title: "Crunch the numbers", mandatory: true }],
          budget: { currency_committed_usd: 1_000_000 },
        },
        agent,
      )
    ).task.version;
  const moves = ["PLANNING", "READY", "RUNNING"];
  for (const [i, to] of moves.entries()) {
    if (i + 1 < version) continue;
    version = (
      await transitionTask(
        db,
        LONG_HISTORY_TASK_ID,
        { expected_version: i + 1, to, transition_id: `${LONG_HISTORY_TASK_ID}:v${i + 2}` },
        agent,
      )
    ).task.version;
  }
  // The creation and the three moves are events too.
  const updates = Math.max(0, events - 1 - moves.length);
  for (let i = version - moves.length; i <= updates; i++) {
    const patch = { budget: { tokens_spent: i * 10, hops_used: i } };
    const expected = moves.length + i;
    version = (
      await transitionTask(
        db,
        LONG_HISTORY_TASK_ID,
        {
          expected_version: expected,
          patch,
          reason: `progress report ${i}`,
          transition_id: `${LONG_HISTORY_TASK_ID}:v${expected + 1}`,
        },
        agent,
      )
    ).task.version;
    if (i % 5000 === 0)
      log(`long history: ${i} of ${updates} updates, ${Math.round((performance.now() - started) / 1000)} s`);
  }
  return {
    taskId: LONG_HISTORY_TASK_ID,
    events: updates + 1 + moves.length,
    ms: Math.round(performance.now() - started),
  };
}

/** Whether the long-history task has all its events (a start killed while seeding it left it shorter). */
export async function isLongHistoryComplete(db: Db, events: number): Promise<boolean> {
  return ((await getTaskVersion(db, LONG_HISTORY_TASK_ID)) ?? 0) >= events;
}
