import { getEnv } from "@/lib/env";
import { refundListSchema, type SandboxRefund } from "@/lib/sandbox/contract";
import { startSandbox, type Sandbox } from "@/lib/sandbox/server";

/**
 * The payment provider for effect tests: the sandbox the server under test
 * runs (scripts/start.ts, on SANDBOX_PORT), so its reconciler and webhooks
 * see the same refunds the tests make. Only when the server runs none
 * (VERITY_START_SANDBOX=false) does a test start its own.
 */
export interface Provider {
  url: string;
  close(): Promise<void>;
}

export async function useProvider(): Promise<Provider> {
  const url = getEnv().sandboxUrl;
  const healthy = await fetch(`${url}/__sandbox/health`, { signal: AbortSignal.timeout(2_000) })
    .then((r) => r.ok)
    .catch(() => false);
  if (healthy) return { url, close: async () => undefined };
  const own: Sandbox = await startSandbox({ port: 0 });
  return { url: own.url, close: () => own.close() };
}

/** Every refund the provider holds for one task (the effects, whatever their keys). */
export async function refundsOfTask(providerUrl: string, taskId: string): Promise<SandboxRefund[]> {
  const res = await fetch(`${providerUrl}/v1/refunds`);
  return refundListSchema.parse(await res.json()).data.filter((r) => r.metadata.task_id === taskId);
}
