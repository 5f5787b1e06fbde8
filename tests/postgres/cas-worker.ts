/**
 * One racing process of tests/postgres/concurrency.test.ts: its own Node
 * process, its own PrismaClient and connection, driven over IPC. It
 * connects and says "ready"; each "run" command is sent to every worker at
 * the same moment, so the command itself is the starting gun.
 *
 *   increment: read the task, CAS hops_used + 1, retry on version_conflict
 *   same-id:   round r sends transition_id "same-<r>" at expected version r
 */
import { openDatabase } from "@/lib/db/client";
import { isAppError } from "@/lib/core/errors";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import type { Actor } from "@/lib/model/actor";

export type WorkerCommand =
  { type: "run"; mode: "increment" | "same-id"; taskId: string; count: number } | { type: "exit" };

export type WorkerReport =
  | { kind: "increment"; worker: number; successes: number; conflicts: number; versionsWritten: number[] }
  | {
      kind: "same-id";
      worker: number;
      outcomes: Array<{ round: number; replayed: boolean; version: number; transitionId: string }>;
    };

export type WorkerMessage =
  { type: "ready" } | { type: "done"; report: WorkerReport } | { type: "failed"; error: string };

const url = process.env.VERITY_WORKER_DATABASE_URL;
const worker = Number(process.env.VERITY_WORKER_INDEX ?? 0);
const actor: Actor = { identity: `spiffe://verity.test/worker/${worker}`, kind: "agent" };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const send = (message: WorkerMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));
const describeError = (error: unknown) =>
  error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ""}` : String(error);

if (!process.send || !url) {
  console.error(
    "cas-worker is started by tests/postgres/concurrency.test.ts (child_process.fork, VERITY_WORKER_DATABASE_URL)",
  );
  process.exit(2);
}

// One connection per process: the race is between processes, not inside one.
const handle = openDatabase({ kind: "postgres", url }, { poolSize: 1 });

async function increment(taskId: string, count: number): Promise<WorkerReport> {
  let conflicts = 0;
  let streak = 0;
  const versionsWritten: number[] = [];
  // What this process believes the task is: the result of its own last
  // write, or a fresh read after it lost a race. The patch is computed from
  // that belief, so a lost update would show as a wrong hops_used.
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
      await sleep(Math.random() * Math.min(32, 4 * 2 ** streak++));
      known = await getTaskOrThrow(handle.db, taskId);
    }
  }
  return { kind: "increment", worker, successes: versionsWritten.length, conflicts, versionsWritten };
}

async function sameId(taskId: string, rounds: number): Promise<WorkerReport> {
  const outcomes: Array<{ round: number; replayed: boolean; version: number; transitionId: string }> = [];
  for (let round = 1; round <= rounds; round++) {
    // Every process sends the identical request for a round, so each is
    // either the one that applies it or a retry that must be replayed.
    const result = await transitionTask(
      handle.db,
      taskId,
      {
        expected_version: round,
        patch: { budget: { hops_used: round } },
        reason: `round ${round}`,
        transition_id: `same-${round}`,
      },
      actor,
    );
    outcomes.push({
      round,
      replayed: result.replayed,
      version: result.task.version,
      transitionId: result.transition.id,
    });
  }
  return { kind: "same-id", worker, outcomes };
}

process.on("message", (command: WorkerCommand) => {
  if (command.type === "exit") {
    void handle.close().finally(() => process.exit(0));
    return;
  }
  const run =
    command.mode === "increment" ? increment(command.taskId, command.count) : sameId(command.taskId, command.count);
  run.then(
    (report) => send({ type: "done", report }),
    (error: unknown) => send({ type: "failed", error: describeError(error) }),
  );
});

// Connect (and load every module) before saying ready, so that the race
// measures transitions, not start-up.
handle.db.$queryRaw`SELECT 1`.then(
  () => send({ type: "ready" }),
  async (error: unknown) => {
    await send({ type: "failed", error: describeError(error) });
    process.exit(1);
  },
);
