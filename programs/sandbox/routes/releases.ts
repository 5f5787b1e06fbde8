import { digestOf } from "@/lib/core/canonical-json";
import { newId } from "@/lib/core/ids";
import { createReleaseBodySchema, type SandboxRelease, type SandboxRollback } from "@/lib/connectors/sandbox/contract";
import type { RequestContext, SandboxContext } from "@/programs/sandbox/context";
import type { Namespace } from "@/programs/sandbox/journal";
import { fromZodIssues, queryOf, readJsonBody, SandboxHttpError, sendJson } from "@/programs/sandbox/http";
import { idempotencyKeyOf, runIdempotentMutation } from "@/programs/sandbox/mutation";

/**
 * The release service: deploys, with the same idempotency rules and faults
 * as refunds. A deploy is irreversible in the sense that matters here: once
 * it has happened, doing it again is a second release, not a retry.
 */

/** A release's body (a rollback's too: it names its release by the release's own request). */
async function releaseParamsOf(ctx: SandboxContext, rc: RequestContext) {
  const parsed = createReleaseBodySchema.safeParse(await readJsonBody(rc.req, ctx.maxBodyBytes));
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  return { ...parsed.data, metadata: parsed.data.metadata ?? {} };
}

/** The fields a release and its rollback share: what was deployed, under which key, when. */
function releaseFieldsOf(params: Awaited<ReturnType<typeof releaseParamsOf>>, key: string) {
  return {
    service: params.service,
    version: params.version,
    environment: params.environment,
    commit: params.commit,
    metadata: params.metadata,
    idempotency_key: key,
    created_at: new Date().toISOString(),
  };
}

/** `?idempotency_key=K` answers a lookup (with `in_flight`); without it, every record, oldest first. */
function sendLookupList<T>(
  ctx: SandboxContext,
  rc: RequestContext,
  namespace: Namespace,
  all: readonly T[],
  byKey: (key: string) => T | undefined,
): void {
  const key = queryOf(rc.url, ["idempotency_key"]).idempotency_key;
  if (key === undefined) return sendJson(rc.res, 200, { data: all });
  const found = byKey(key);
  sendJson(rc.res, 200, { data: found ? [found] : [], in_flight: !found && ctx.store.keys.isInFlight(namespace, key) });
}

export async function createRelease(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const key = idempotencyKeyOf(rc.req);
  const params = await releaseParamsOf(ctx, rc);
  await runIdempotentMutation(ctx, rc, {
    namespace: "releases",
    key,
    fingerprint: digestOf({ method: "POST", path: "/v1/releases", params }),
    build: (): SandboxRelease => ({ id: newId("rel"), status: "deployed", ...releaseFieldsOf(params, key) }),
  });
}

export async function listReleases(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  sendLookupList(ctx, rc, "releases", ctx.store.listReleases(), (key) => ctx.store.releaseByIdempotencyKey(key));
}

/**
 * Rolls back a deployed release (the compensation of deploy.release): the
 * same idempotency rules and faults. A rollback of a release that was never
 * deployed applied nothing: 400, like any refused request.
 */
export async function createRollback(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const key = idempotencyKeyOf(rc.req);
  const params = await releaseParamsOf(ctx, rc);
  const release = ctx.store.deployedRelease(params);
  // A replay of a committed rollback answers with it even if the check would now differ.
  if (!release && !ctx.store.rollbackByIdempotencyKey(key))
    throw new SandboxHttpError(
      400,
      "invalid_request_error",
      "release_not_deployed",
      `No release of ${params.service} ${params.version} (${params.commit}) to ${params.environment} was deployed: nothing to roll back.`,
      "version",
    );
  await runIdempotentMutation(ctx, rc, {
    namespace: "rollbacks",
    key,
    fingerprint: digestOf({ method: "POST", path: "/v1/rollbacks", params }),
    build: (): SandboxRollback => ({
      id: newId("rbk"),
      status: "rolled_back",
      release_id: release?.id ?? "rel_unknown",
      ...releaseFieldsOf(params, key),
    }),
  });
}

export async function listRollbacks(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  sendLookupList(ctx, rc, "rollbacks", ctx.store.listRollbacks(), (key) => ctx.store.rollbackByIdempotencyKey(key));
}
