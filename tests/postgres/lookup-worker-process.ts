/**
 * A tool's lookup worker as its own process, for tests/postgres/worker-lookup.test.ts:
 * it claims the oldest open lookup of VERITY_WORKER_TOOL (the claim
 * committed before it says so over IPC), then holds it without answering,
 * as a worker busy asking its provider does, until the test SIGKILLs it.
 */
import { openDatabase } from "@/lib/db/client";
import type { Principal } from "@/lib/model/permissions";
import { claimLookup } from "@/lib/use-cases/tools/claim-lookup";

export type LookupWorkerMessage =
  | { type: "claimed"; lookupId: string; fencingToken: number; leaseExpiresAt: string }
  | { type: "nothing" }
  | { type: "failed"; error: string };

const url = process.env.VERITY_WORKER_DATABASE_URL;
const tool = process.env.VERITY_WORKER_TOOL;
if (!process.send || !url || !tool) {
  console.error(
    "lookup-worker-process is started by tests/postgres/worker-lookup.test.ts (fork, VERITY_WORKER_DATABASE_URL, VERITY_WORKER_TOOL)",
  );
  process.exit(2);
}
const send = (message: LookupWorkerMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

export const killedWorker: Principal = {
  kind: "agent",
  id: "tok_killed",
  identity: "spiffe://verity.local/agent/lookup-worker-1",
  role: "agent",
  displayName: "lookup-worker-1",
  tenantId: "default",
  scopes: { workflows: "*", tools: [tool], take_over_leases: false },
};

const handle = openDatabase({ kind: "postgres", url }, { poolSize: 1 });
try {
  const claimed = await claimLookup(handle.db, tool, { lease_seconds: 30 }, killedWorker);
  if (!claimed) await send({ type: "nothing" });
  else
    await send({
      type: "claimed",
      lookupId: claimed.lookup.id,
      fencingToken: claimed.lookup.fencingToken,
      leaseExpiresAt: claimed.lookup.leaseExpiresAt!.toISOString(),
    });
  // Holding the lookup: the answer never comes. The test kills this process here.
  await new Promise(() => {});
} catch (error) {
  await send({ type: "failed", error: error instanceof Error ? `${error.message}\n${error.stack}` : String(error) });
  process.exit(1);
}
