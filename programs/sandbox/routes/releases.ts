import { digestOf } from "@/lib/core/canonical-json";
import { newId } from "@/lib/core/ids";
import { createReleaseBodySchema, type SandboxRelease } from "@/lib/connectors/sandbox/contract";
import type { RequestContext, SandboxContext } from "@/programs/sandbox/context";
import { fromZodIssues, queryOf, readJsonBody, sendJson } from "@/programs/sandbox/http";
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
