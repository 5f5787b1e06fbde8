import type { Db } from "@/lib/db";
import { createTask, transitionTask, type Actor } from "@/lib/engine/tasks";

/**
 * A task with a very long history, for the browser test that opens and
 * scrolls a 20,000-event timeline (VERITY_E2E_LONG_HISTORY, set only by
 * playwright.config.ts; never by `npm start`). Every event is a real
 * transition through the engine: an in-place budget update, each its own
 * compare-and-swap with its transition row and audit entry, exactly as an
 * agent reporting its spend makes them. Budget updates cross no checkpoint
 * boundary, so each is the single CAS statement of lib/engine/tasks.ts.
 *
 * Committing them in batches (transitionTaskInTransaction inside one
 * transaction) was measured and gained nothing on PGlite: the cost is the
 * engine's CPU per transition (validation, digests, the statement), not
 * the commit. So each transition is its own, as in production.
 */
export const LONG_HISTORY_TASK_ID = "e2e-long-history";
export const longHistoryAgent: Actor = { identity: "spiffe://verity.local/agent/long-runner", kind: "agent" };

export async function seedLongHistoryTask(db: Db, events: number, log: (line: string) => void = () => {}): Promise<{ taskId: string; events: number; ms: number }> {
  const started = performance.now();
  const agent = longHistoryAgent;
  const { task } = await createTask(
    db,
    {
      workflow: "agent-task",
      task_id: LONG_HISTORY_TASK_ID,
      intent_id: "long-history",
      subtasks: [{ id: "crunch", title: "Crunch the numbers", mandatory: true }],
      budget: { currency_committed_usd: 1_000_000 },
    },
    agent,
  );
  let version = task.version;
  const moves = ["PLANNING", "READY", "RUNNING"];
  for (const to of moves) version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
  // The creation and the three moves are events too.
  const updates = Math.max(0, events - 1 - moves.length);
  for (let i = 1; i <= updates; i++) {
    const patch = { budget: { tokens_spent: i * 10, hops_used: i } };
    version = (await transitionTask(db, task.id, { expected_version: version, patch, reason: `progress report ${i}` }, agent)).task.version;
    if (i % 5000 === 0) log(`long history: ${i} of ${updates} updates, ${Math.round((performance.now() - started) / 1000)} s`);
  }
  return { taskId: task.id, events: updates + 1 + moves.length, ms: Math.round(performance.now() - started) };
}
