import { digestOf } from "@/lib/core/canonical-json";
import { newId } from "@/lib/core/ids";
import {
  createReleaseBodySchema,
  createRollbackBodySchema,
  type SandboxRelease,
  type SandboxRollback,
} from "@/lib/connectors/sandbox/contract";
import type { RequestContext, SandboxContext } from "@/programs/sandbox/context";
import { fromZodIssues, queryOf, readJsonBody, SandboxHttpError, sendJson } from "@/programs/sandbox/http";
import { idempotencyKeyOf, runIdempotentMutation } from "@/programs/sandbox/mutation";

/**
 * The release service: deploys, with the same idempotency rules and faults
 * as refunds. A deploy is irreversible in the sense that matters here: once
 * it has happened, doing it again is a second release, not a retry.
 */

export async function createRelease(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const key = idempotencyKeyOf(rc.req);
  const parsed = createReleaseBodySchema.safeParse(await readJsonBody(rc.req, ctx.maxBodyBytes));
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  const params = { ...parsed.data, metadata: parsed.data.metadata ?? {} };
  await runIdempotentMutation(ctx, rc, {
    namespace: "releases",
    key,
    fingerprint: digestOf({ method: "POST", path: "/v1/releases", params }),
    build: (): SandboxRelease => ({
      id: newId("rel"),
      status: "deployed",
      service: params.service,
      version: params.version,
      environment: params.environment,
      commit: params.commit,
      metadata: params.metadata,
      idempotency_key: key,
      created_at: new Date().toISOString(),
    }),
  });
}

/** `?idempotency_key=K` answers a lookup; without it, every release, oldest first. */
export async function listReleases(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const key = queryOf(rc.url, ["idempotency_key"]).idempotency_key;
  if (key === undefined) return sendJson(rc.res, 200, { data: ctx.store.listReleases() });
  const release = ctx.store.releaseByIdempotencyKey(key);
  sendJson(rc.res, 200, {
    data: release ? [release] : [],
    in_flight: !release && ctx.store.keys.isInFlight("releases", key),
  });
}

/**
 * Rolls back a deployed release (the compensation of deploy.release): the
 * same idempotency rules and faults. A rollback of a release that was never
 * deployed applied nothing: 400, like any refused request.
 */
export async function createRollback(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const key = idempotencyKeyOf(rc.req);
  const parsed = createRollbackBodySchema.safeParse(await readJsonBody(rc.req, ctx.maxBodyBytes));
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  const params = { ...parsed.data, metadata: parsed.data.metadata ?? {} };
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
      service: params.service,
      version: params.version,
      environment: params.environment,
      commit: params.commit,
      metadata: params.metadata,
      idempotency_key: key,
      created_at: new Date().toISOString(),
    }),
  });
}

/** `?idempotency_key=K` answers a lookup; without it, every rollback, oldest first. */
export async function listRollbacks(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const key = queryOf(rc.url, ["idempotency_key"]).idempotency_key;
  if (key === undefined) return sendJson(rc.res, 200, { data: ctx.store.listRollbacks() });
  const rollback = ctx.store.rollbackByIdempotencyKey(key);
  sendJson(rc.res, 200, {
    data: rollback ? [rollback] : [],
    in_flight: !rollback && ctx.store.keys.isInFlight("rollbacks", key),
  });
}
