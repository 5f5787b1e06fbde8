import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { getEnv } from "@/lib/config/env";
import { refundListSchema, type SandboxRefund } from "@/lib/connectors/sandbox/contract";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";

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

/**
 * Somewhere else for the provider's webhooks (X-Sandbox-Webhook-Url): tests
 * that assert what the worker's own report does send them here, so the
 * server's webhook endpoint cannot settle the execution first.
 */
export interface WebhookSink {
  url: string;
  received: string[];
  close(): Promise<void>;
}

export async function startWebhookSink(): Promise<WebhookSink> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      received.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The secret the server under test verifies Sandbox-Signature with: the
 * configured one, or the one scripts/start.ts generated into the e2e data
 * folder (the folder as playwright.config.ts chooses it).
 */
export function serverWebhookSecret(): string {
  const configured = process.env.VERITY_SANDBOX_WEBHOOK_SECRET;
  if (configured) return configured;
  return readFileSync(path.join(process.env.E2E_DATA_DIR ?? ".data/e2e", "sandbox-webhook-secret"), "utf8").trim();
}
