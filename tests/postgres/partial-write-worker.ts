/**
 * The process tests/postgres/partial-write.test.ts SIGKILLs while it holds
 * an open transaction: it records one intent (the task's CAS move and the
 * execution row, one transaction) on PostgreSQL over its single connection,
 * and is killed while that transaction waits on a lock the test holds.
 */
import { openDatabase } from "@/lib/db/client";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import type { Actor } from "@/lib/model/actor";

export type PartialWriteCommand = {
  type: "record-intent";
  taskId: string;
  expectedVersion: number;
  toolCallId: string;
  request: Record<string, unknown>;
};
export type PartialWriteMessage =
  { type: "ready"; backendPid: number } | { type: "done"; kind: string } | { type: "failed"; error: string };

const url = process.env.VERITY_WORKER_DATABASE_URL;
const actor: Actor = { identity: "spiffe://verity.test/agent/partial-write-worker", kind: "agent" };
const send = (message: PartialWriteMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

if (!process.send || !url) {
  console.error(
    "partial-write-worker is started by tests/postgres/partial-write.test.ts (child_process.fork, VERITY_WORKER_DATABASE_URL)",
  );
  process.exit(2);
}

// One connection, so the backend that says hello is the one the transaction runs on.
const handle = openDatabase({ kind: "postgres", url }, { poolSize: 1 });
const [hello] = await handle.db.$queryRaw<Array<{ pid: number }>>`SELECT pg_backend_pid() AS pid`;
if (!hello) throw new Error("pg_backend_pid() returned no row");
await send({ type: "ready", backendPid: hello.pid });

process.on("message", (command: PartialWriteCommand) => {
  recordIntent(
    handle.db,
    command.taskId,
    {
      tool_call_id: command.toolCallId,
      tool: "payments.refund",
      request: command.request,
      expected_version: command.expectedVersion,
    },
    actor,
  ).then(
    (result) => send({ type: "done", kind: result.kind }),
    (error: unknown) => send({ type: "failed", error: error instanceof Error ? error.message : String(error) }),
  );
});
