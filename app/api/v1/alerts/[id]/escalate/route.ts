import { parseInput, readApiJson } from "@/lib/adapters/api/context";
import { escalationResource } from "@/lib/adapters/api/alert-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { AlertActionInputSchema } from "@/lib/use-cases/alerts/alert-actions";
import { escalateAlert } from "@/lib/use-cases/alerts/divergence";
import { etagOf, parseIfMatch, withExpectedVersion } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** ESCALATED with a reason, and the task to WAITING_FOR_HUMAN where its workflow allows (same transaction); `task.note` says what happened to it. */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "alerts:act");
  const { id } = await params;
  const input = parseInput(
    AlertActionInputSchema,
    withExpectedVersion(await readApiJson(request), parseIfMatch(request.headers.get("if-match"))),
  );
  const result = await escalateAlert(
    dbFor(principal),
    id,
    { expectedVersion: input.expected_version, reason: input.reason },
    actorOf(principal),
  );
  return json(escalationResource(result), { headers: { ETag: etagOf(result.alert.version) } });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
