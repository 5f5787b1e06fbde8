import {
  createReleaseBodySchema,
  releaseListSchema,
  rollbackListSchema,
  type SandboxRelease,
  type SandboxRollback,
} from "@/lib/connectors/sandbox/contract";
import type { ToolOutcome } from "@/sdk";

/**
 * The coding agent's client of the release service (the sandbox's
 * /v1/releases): the deploy itself, under the execution's idempotency key,
 * and the lookup its workers answer Verity's questions with. Verity never
 * calls this service: deploy.release is a registered tool, and this is the
 * tool owner's code.
 */
export interface ReleaseServiceOptions {
  baseUrl: string;
  timeoutMs: number;
}

export type ServiceLookup<T> =
  { result: "found"; record: T } | { result: "not_found" } | { result: "unknown"; reason: string };
export type ReleaseLookup = ServiceLookup<SandboxRelease>;

export function deploy(
  options: ReleaseServiceOptions,
  idempotencyKey: string,
  request: Record<string, string>,
  metadata: { execution_id: string; task_id: string },
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const body = createReleaseBodySchema.parse({ ...request, metadata });
  return post(options, "/v1/releases", idempotencyKey, body, signal, (json) => {
    const release = json as SandboxRelease;
    return {
      outcome: "succeeded",
      result: { release_id: release.id, environment: release.environment },
      evidence: { provider: "release-service", release_id: release.id, idempotency_key: release.idempotency_key },
    };
  });
}

/** deploy.rollback: undoes the release the request names (the compensated call's own request). */
export function rollBack(
  options: ReleaseServiceOptions,
  idempotencyKey: string,
  request: Record<string, string>,
  metadata: { execution_id: string; task_id: string },
  signal: AbortSignal,
): Promise<ToolOutcome> {
  // A rollback names its release by the release's own request (lib/connectors/sandbox/contract.ts).
  const body = createReleaseBodySchema.parse({ ...request, metadata });
  return post(options, "/v1/rollbacks", idempotencyKey, body, signal, (json) => {
    const rollback = json as SandboxRollback;
    return {
      outcome: "succeeded",
      result: { rollback_id: rollback.id, release_id: rollback.release_id },
      evidence: { provider: "release-service", rollback_id: rollback.id, idempotency_key: rollback.idempotency_key },
    };
  });
}

async function post(
  options: ReleaseServiceOptions,
  path: string,
  idempotencyKey: string,
  body: unknown,
  signal: AbortSignal,
  succeeded: (json: unknown) => ToolOutcome,
): Promise<ToolOutcome> {
  let res: Response;
  try {
    res = await fetch(`${options.baseUrl}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": idempotencyKey },
      body: JSON.stringify(body),
      signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)]),
    });
  } catch (error) {
    return { outcome: "unknown", error: `the release service did not answer: ${String(error)}` };
  }
  const json: unknown = await res.json().catch(() => undefined);
  if (res.status === 200) return succeeded(json);
  // Only a 400 or a 503 not_processed says nothing was applied; anything else may have been.
  if (res.status === 400 || res.status === 503)
    return {
      outcome: "failed",
      error: `release service ${res.status}: ${JSON.stringify(json)}`,
      retryable: res.status === 503,
    };
  return { outcome: "unknown", error: `release service ${res.status}: ${JSON.stringify(json)}` };
}

export function lookUpRelease(options: ReleaseServiceOptions, idempotencyKey: string): Promise<ReleaseLookup> {
  return lookUp(options, "/v1/releases", idempotencyKey, (json) => releaseListSchema.parse(json));
}

export function lookUpRollback(
  options: ReleaseServiceOptions,
  idempotencyKey: string,
): Promise<ServiceLookup<SandboxRollback>> {
  return lookUp(options, "/v1/rollbacks", idempotencyKey, (json) => rollbackListSchema.parse(json));
}

async function lookUp<T>(
  options: ReleaseServiceOptions,
  path: string,
  idempotencyKey: string,
  parse: (json: unknown) => { data: T[]; in_flight?: boolean },
): Promise<ServiceLookup<T>> {
  try {
    const res = await fetch(`${options.baseUrl}${path}?idempotency_key=${encodeURIComponent(idempotencyKey)}`, {
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (res.status !== 200) return { result: "unknown", reason: `the release service answered ${res.status}` };
    const list = parse(await res.json());
    const [record] = list.data;
    if (record) return { result: "found", record };
    if (list.in_flight) return { result: "unknown", reason: "a request under this key is still running" };
    return { result: "not_found" };
  } catch (error) {
    return { result: "unknown", reason: `the release service could not be asked: ${String(error)}` };
  }
}
