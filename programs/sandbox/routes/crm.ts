import { digestOf } from "@/lib/core/canonical-json";
import { newId } from "@/lib/core/ids";
import { createNoteBodySchema, type SandboxNote } from "@/lib/connectors/sandbox/contract";
import type { RequestContext, SandboxContext } from "@/programs/sandbox/context";
import { fromZodIssues, invalidParameter, queryOf, readJsonBody, sendJson } from "@/programs/sandbox/http";
import { idempotencyKeyOf, runIdempotentMutation } from "@/programs/sandbox/mutation";

/** The CRM: notes on customers, with the same idempotency rules as refunds. */

export async function createNote(ctx: SandboxContext, rc: RequestContext, customerId: string): Promise<void> {
  const key = idempotencyKeyOf(rc.req);
  checkCustomerId(customerId);
  const parsed = createNoteBodySchema.safeParse(await readJsonBody(rc.req, ctx.maxBodyBytes));
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  const params = { ...parsed.data, metadata: parsed.data.metadata ?? {} };
  await runIdempotentMutation(ctx, rc, {
    namespace: "crm_notes",
    key,
    // The customer is part of the request: the same key on another customer is another request.
    fingerprint: digestOf({ method: "POST", path: "/v1/crm/customers/:id/notes", customerId, params }),
    build: (): SandboxNote => ({
      id: newId("note"),
      customer_id: customerId,
      text: params.text,
      metadata: params.metadata,
      idempotency_key: key,
      created_at: new Date().toISOString(),
    }),
  });
}

export async function listCustomerNotes(ctx: SandboxContext, rc: RequestContext, customerId: string): Promise<void> {
  queryOf(rc.url, []);
  checkCustomerId(customerId);
  sendJson(rc.res, 200, { data: ctx.store.listNotes(customerId) });
}

/** `?idempotency_key=K` is the reconciler's lookup; without it, every note. */
export async function listNotes(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const key = queryOf(rc.url, ["idempotency_key"]).idempotency_key;
  if (key === undefined) return sendJson(rc.res, 200, { data: ctx.store.listNotes() });
  const note = ctx.store.noteByIdempotencyKey(key);
  sendJson(rc.res, 200, { data: note ? [note] : [], in_flight: !note && ctx.store.keys.isInFlight("crm_notes", key) });
}

function checkCustomerId(id: string): void {
  if (id.length === 0 || id.length > 255) throw invalidParameter("customer id is 1–255 characters", "customer");
}
