/**
 * A server's monitor pass in a process of its own, for
 * tests/postgres/monitor-takeover.test.ts to SIGKILL in the middle of it:
 * it connects, says "ready", and on "run" starts one pass of the first
 * tenant, as the background loop does (everyMs), with the test's lease.
 */
import { openDatabase } from "@/lib/db/client";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";

export type MonitorWorkerCommand = { type: "run"; everyMs: number; leaseMs: number };
export type MonitorWorkerMessage =
  { type: "ready" } | { type: "done"; runId: string | null } | { type: "failed"; error: string };

const url = process.env.VERITY_WORKER_DATABASE_URL;
const send = (message: MonitorWorkerMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

if (!process.send || !url) {
  console.error(
    "monitor-pass-worker is started by tests/postgres/monitor-takeover.test.ts (fork, VERITY_WORKER_DATABASE_URL)",
  );
  process.exit(2);
}

const handle = openDatabase({ kind: "postgres", url }, { poolSize: 4 });
process.on("message", (command: MonitorWorkerCommand) => {
  if (command.type !== "run") return;
  runMonitorPass(handle.db, {}, { everyMs: command.everyMs, leaseMs: command.leaseMs })
    .then((pass) => send({ type: "done", runId: pass.run?.id ?? null }))
    .catch((error: unknown) => send({ type: "failed", error: error instanceof Error ? error.message : String(error) }));
});
await handle.db.$queryRaw`SELECT 1`;
await send({ type: "ready" });
