import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import { startSandbox, type Sandbox, type SandboxOptions } from "@/programs/sandbox/server";
import { refundListSchema, type SandboxRefund } from "@/lib/connectors/sandbox/contract";

/** Everything a test starts is stopped after it, even when it fails. */
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

export async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const s = await startSandbox({ allowReset: true, ...options });
  cleanups.push(() => s.close());
  return s;
}

export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "verity-sandbox-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export const refundBody = (over: Partial<Record<string, unknown>> = {}) => ({
  amount_cents: 1250,
  currency: "usd",
  charge_id: "ch_1",
  customer_id: "cus_1",
  metadata: { execution_id: "exec_1", task_id: "task_1" },
  ...over,
});

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: await res.json().catch(() => undefined) };
}

export async function get(url: string): Promise<{ status: number; json: any }> {
  const res = await fetch(url);
  return { status: res.status, json: await res.json() };
}

export async function listRefunds(base: string): Promise<SandboxRefund[]> {
  const res = await fetch(`${base}/v1/refunds`);
  return refundListSchema.parse(await res.json()).data;
}

export function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface Received {
  headers: IncomingMessage["headers"];
  body: string;
}

/**
 * A webhook receiver (or any fake upstream). `answer` decides each response;
 * by default a 200.
 */
export async function receiver(
  answer: (req: Received, res: ServerResponse, n: number) => void = (_r, res) => res.end("ok"),
) {
  const received: Received[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    const r = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
    received.push(r);
    answer(r, res, received.length);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** Polls until `check` returns something truthy: for states reached by another request, without guessing a sleep. */
export async function waitFor<T>(check: () => Promise<T>, { timeoutMs = 3_000, everyMs = 20 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`waitFor: not reached within ${timeoutMs} ms`);
    await sleepMs(everyMs);
  }
}
