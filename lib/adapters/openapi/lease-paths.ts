/** The leases part of the OpenAPI document: acquire, read, renew, release a task's lease. */
import {
  fencingTokenHeader,
  fencingTokenParam,
  jsonContent,
  type JsonSchema,
  optionalInBody,
  problems,
  ref,
  type SchemaEntries,
  taskId,
  tokenDescription,
} from "@/lib/adapters/openapi/shared-components";
import { AcquireTaskLeaseInputSchema } from "@/lib/use-cases/authority/acquire-task-lease";
import { LeaseReleaseRequestSchema, LeaseRenewRequestSchema } from "@/lib/adapters/api/context";
import { LeaseResourceSchema, LeaseStateSchema } from "@/lib/adapters/api/lease-resources";

export const leaseRequestSchemas: SchemaEntries = [
  ["LeaseRequest", AcquireTaskLeaseInputSchema],
  ["LeaseRenewRequest", LeaseRenewRequestSchema],
  ["LeaseReleaseRequest", LeaseReleaseRequestSchema],
];

export const leaseResponseSchemas: SchemaEntries = [
  ["Lease", LeaseResourceSchema],
  ["LeaseState", LeaseStateSchema],
];

export function leaseFieldsOptionalInBody(requestSchemas: Record<string, JsonSchema>): void {
  for (const name of ["LeaseRenewRequest", "LeaseReleaseRequest"])
    optionalInBody(requestSchemas[name], "fencing_token", tokenDescription);
}

export function leasePaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/tasks/{id}/lease": {
      post: {
        tags: ["leases"],
        operationId: "acquireLease",
        summary: "Take the task's lease",
        description:
          "Free or expired: yours, with a new lease id and a new, greater fencing token. A lease belongs to one worker process, not to an identity: " +
          "while a lease is live, every other acquire is 409 lease-conflict naming the holder, token and expiry, another process of the same identity included. " +
          "Send your own lease_id to make the acquire retry-safe: the same lease_id (and holder) gets the same live lease back, renewed. " +
          "The body may be omitted (ttl_seconds defaults to 60; above VERITY_MAX_LEASE_TTL_SECONDS, default 300, it is a 400 naming ttl_seconds). " +
          "`take_over: true` takes a live lease from another identity and fences its token off; it needs the take_over_leases scope (403 without). " +
          "An agent may lease only its own and its delegated tasks (another agent's task is a 404).",
        parameters: [taskId],
        requestBody: { required: false, content: jsonContent(ref("LeaseRequest")) },
        responses: {
          200: { description: "The lease.", headers: fencingTokenHeader, content: jsonContent(ref("Lease")) },
          ...problems(400, 401, 403, 404, 409, 413, 415),
        },
      },
      get: {
        tags: ["leases"],
        operationId: "getLease",
        summary: "The task's latest lease, live or expired",
        parameters: [taskId],
        responses: {
          200: { description: "The lease, or null.", content: jsonContent(ref("LeaseState")) },
          ...problems(401, 403, 404),
        },
      },
    },
    "/api/v1/tasks/{id}/lease/renew": {
      post: {
        tags: ["leases"],
        operationId: "renewLease",
        summary: "Extend your live lease",
        description: "409 lease-conflict when the token is no longer your live lease: stop writing, and acquire again.",
        parameters: [taskId, fencingTokenParam],
        requestBody: { required: false, content: jsonContent(ref("LeaseRenewRequest")) },
        responses: {
          200: { description: "The renewed lease.", headers: fencingTokenHeader, content: jsonContent(ref("Lease")) },
          ...problems(400, 401, 403, 409, 413, 415),
        },
      },
    },
    "/api/v1/tasks/{id}/lease/release": {
      post: {
        tags: ["leases"],
        operationId: "releaseLease",
        summary: "End your lease now",
        description:
          "204 whether or not the token was still current: a lease no longer yours is released already, and a retried release must not fail.",
        parameters: [taskId, fencingTokenParam],
        requestBody: { required: false, content: jsonContent(ref("LeaseReleaseRequest")) },
        responses: {
          204: { description: "Released (or no longer yours)." },
          ...problems(400, 401, 403, 404, 413, 415),
        },
      },
    },
  };
}
