import { createReleaseBodySchema, releaseListSchema, type SandboxRelease } from "@/lib/connectors/sandbox/contract";
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

export type ReleaseLookup =
  { result: "found"; record: SandboxRelease } | { result: "not_found" } | { result: "unknown"; reason: string };

export async function deploy(
  options: ReleaseServiceOptions,
  idempotencyKey: string,
  request: Record<string, string>,
  metadata: { execution_id: string; task_id: string },
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const body = createReleaseBodySchema.parse({ ...request, metadata });
  let res: Response;
  try {
    res = await fetch(`${options.baseUrl}/v1/releases`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": idempotencyKey },
      body: JSON.stringify(body),
      signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)]),
    });
  } catch (error) {
    return { outcome: "unknown", error: `the release service did not answer: ${String(error)}` };
  }
  const json: unknown = await res.json().catch(() => undefined);
  if (res.status === 200) {
    const release = json as SandboxRelease;
    return {
      outcome: "succeeded",
      result: { release_id: release.id, environment: release.environment },
      evidence: { provider: "release-service", release_id: release.id, idempotency_key: release.idempotency_key },
    };
  }
  // Only a 400 or a 503 not_processed says nothing was deployed; anything else may have deployed.
  if (res.status === 400 || res.status === 503)
    return {
      outcome: "failed",
      error: `release service ${res.status}: ${JSON.stringify(json)}`,
      retryable: res.status === 503,
    };
  return { outcome: "unknown", error: `release service ${res.status}: ${JSON.stringify(json)}` };
}

export async function lookUpRelease(options: ReleaseServiceOptions, idempotencyKey: string): Promise<ReleaseLookup> {
  try {
    const res = await fetch(`${options.baseUrl}/v1/releases?idempotency_key=${encodeURIComponent(idempotencyKey)}`, {
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (res.status !== 200) return { result: "unknown", reason: `the release service answered ${res.status}` };
    const list = releaseListSchema.parse(await res.json());
    const [release] = list.data;
    if (release) return { result: "found", record: release };
    if (list.in_flight) return { result: "unknown", reason: "a deploy under this key is still running" };
    return { result: "not_found" };
  } catch (error) {
    return { result: "unknown", reason: `the release service could not be asked: ${String(error)}` };
  }
}
