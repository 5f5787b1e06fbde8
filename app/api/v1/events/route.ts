import { parseInput, readApiJson, requireApiPrincipal } from "@/lib/adapters/api/context";
import { dbFor } from "@/lib/db/client";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { InboundEventSchema, receiveEvent } from "@/lib/stores/messaging";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * An inbound event, received once per `event_id`: a redelivery is answered
 * with the first receipt (`duplicate: true`) and changes nothing. Events
 * posted here with a bearer token are recorded, never applied as provider
 * evidence: an agent cannot settle its own execution by announcing the
 * provider's success (signed provider webhooks go to /events/<provider>).
 */
export const POST = withProblems(async (request) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const body = parseInput(InboundEventSchema, await readApiJson(request));
  const db = dbFor(principal);
  if (body.task_id !== undefined) await requireTaskReach(db, principal, body.task_id, { drive: true });
  const received = await receiveEvent(db, body, async () => ({ recorded: true }));
  const headers: Record<string, string> = received.duplicate ? { "Idempotent-Replayed": "true" } : {};
  return json(
    { event_id: body.event_id, duplicate: received.duplicate, result: received.result },
    { status: received.duplicate ? 200 : 201, headers },
  );
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
