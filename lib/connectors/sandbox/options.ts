import { AppError } from "@/lib/core/errors";
import { HEADER } from "@/lib/connectors/sandbox/contract";

/** What both sandbox connectors are built from. */
export interface SandboxConnectorOptions {
  /** The sandbox's URL, e.g. http://127.0.0.1:4010 */
  baseUrl: string;
  /** Default per-call timeout. */
  timeoutMs?: number;
  /** X-Sandbox-Fault on every create: chaos tests build one connector per fault. */
  faults?: string[];
  /** X-Sandbox-Fault on every lookup (lookups are clean by default, so a reconciler can see through write faults). */
  lookupFaults?: string[];
  /** X-Sandbox-Webhook-Url on refund creates. */
  webhookUrl?: string;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

export function faultHeaders(faults: string[] | undefined): Record<string, string> {
  return faults?.length ? { [HEADER.fault]: faults.join(",") } : {};
}

/** Invariant 2 of the audit: no external effect without an execution identity. A bug, so it throws. */
export function assertEffectIdentity(idempotencyKey: string, metadata: { executionId: string; taskId: string }): void {
  if (!idempotencyKey.trim()) throw new AppError("invariant_violated", "An external effect needs an idempotency key.");
  if (!metadata.executionId.trim() || !metadata.taskId.trim())
    throw new AppError("invariant_violated", "An external effect needs its execution and task ids.");
}
