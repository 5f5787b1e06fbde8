/**
 * bench:effects' provider: the sandbox payment provider in a process of its
 * own, as a real provider is a service of its own. In the bench's process
 * it was served by the same Node thread as the ledger, which then paid for
 * both ends of every provider request while DBOS (its own process) had the
 * provider served by another: the comparison charged the provider's work
 * to one side only. bench/effects.ts forks this file; every side calls it.
 *
 *   child → { url } once it listens; parent → { stop: true }
 */
import { startSandbox } from "@/programs/sandbox/server";

if (!process.send) throw new Error("bench/effects-sandbox.ts is forked by bench/effects.ts");
const sandbox = await startSandbox({ port: 0, host: "127.0.0.1" });
process.send({ url: sandbox.url });
process.on("message", (message: { stop?: true }) => {
  if (message.stop) void sandbox.close().then(() => process.exit(0));
});
