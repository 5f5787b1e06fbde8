/**
 * One racing process of tests/postgres/concurrency.test.ts: its own Node
 * process, its own PrismaClient and connection, talking to the test through
 * IPC. It connects, says "ready", waits for "go" (so that every process
 * starts at once), runs its part of the race, reports and exits.
 *
 *   increment <taskId> <successes>   read the task, CAS hops_used + 1, retry on version_conflict
 *   same-id <taskId> <rounds>        round r: transition_id "same-<r>" at expected version r
 */
import { openDatabase } from "@/lib/db";
import { isAppError } from "@/lib/errors";
import { getTaskOrThrow, transitionTask, type Actor } from "@/lib/engine/tasks";

export type WorkerReport =
  | { kind: "increment"; worker: number; successes: number; conflicts: number; versionsWritten: number[] }
  | { kind: "same-id"; worker: number; outcomes: Array<{ round: number; replayed: boolean; version: number; transitionId: string }> };

export type WorkerMessage = { type: "ready" } | { type: "done"; report: WorkerReport } | { type: "failed"; error: string };

const [mode, taskId, countArg] = process.argv.slice(2);
const url = process.env.VERITY_WORKER_DATABASE_URL;
const worker = Number(process.env.VERITY_WORKER_INDEX ?? 0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const send = (message: WorkerMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

async function main(): Promise<void> {
  if (!process.send) throw new Error("cas-worker must be started with an IPC channel (child_process.fork)");
  if (!url || !taskId || !countArg || (mode !== "increment" && mode !== "same-id")) throw new Error(`usage: cas-worker increment|same-id <taskId> <n> (got ${process.argv.slice(2).join(" ")})`);
  const count = Number(countArg);
  const actor: Actor = { identity: `spiffe://verity.test/worker/${worker}`, kind: "agent" };
  // One connection per process: the race is between processes, not inside one.
  const handle = openDatabase({ kind: "postgres", url }, { poolSize: 1 });
  try {
    await getTaskOrThrow(handle.db, taskId);
    const go = new Promise<void>((resolve) => process.once("message", () => resolve()));
    await send({ type: "ready" });
    await go;

    if (mode === "increment") {
      let conflicts = 0;
      let streak = 0;
      const versionsWritten: number[] = [];
      // What this process believes the task is: the result of its own last
      // write, or a fresh read after it lost a race. Its patch is computed
      // from that belief, so a lost update would show as a wrong hops_used.
      let known = await getTaskOrThrow(handle.db, taskId);
      while (versionsWritten.length < count) {
        try {
          const result = await transitionTask(
            handle.db,
            taskId,
            { expected_version: known.version, patch: { budget: { hops_used: known.state.budget.hops_used + 1 } } },
            actor,
          );
          versionsWritten.push(result.task.version);
          known = result.task;
          streak = 0;
        } catch (error) {
          if (!isAppError(error) || error.code !== "version_conflict") throw error;
          conflicts++;
          // Exponential backoff with jitter, as a well-behaved client does:
          // without it eight processes on two cores re-read and lose in lock step.
          await sleep(Math.random() * Math.min(16, 2 ** streak++));
          known = await getTaskOrThrow(handle.db, taskId);
        }
      }
      await send({ type: "done", report: { kind: "increment", worker, successes: versionsWritten.length, conflicts, versionsWritten } });
    } else {
      const outcomes: Array<{ round: number; replayed: boolean; version: number; transitionId: string }> = [];
      for (let round = 1; round <= count; round++) {
        // Every process sends the identical request for a round, so each is
        // either the one that applies it or a retry that must be replayed.
        const result = await transitionTask(
          handle.db,
          taskId,
          { expected_version: round, patch: { budget: { hops_used: round } }, reason: `round ${round}`, transition_id: `same-${round}` },
          actor,
        );
        outcomes.push({ round, replayed: result.replayed, version: result.task.version, transitionId: result.transition.id });
      }
      await send({ type: "done", report: { kind: "same-id", worker, outcomes } });
    }
  } finally {
    await handle.close();
  }
}

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    const text = error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ""}` : String(error);
    if (process.send) await send({ type: "failed", error: text });
    else console.error(text);
    process.exit(1);
  },
);
