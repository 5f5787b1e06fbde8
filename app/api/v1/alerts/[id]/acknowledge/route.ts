import { parseInput, readApiJson } from "@/lib/adapters/api/context";
import { alertResource } from "@/lib/adapters/api/alert-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { AlertActionInputSchema } from "@/lib/use-cases/alerts/alert-actions";
import { acknowledgeAlert } from "@/lib/use-cases/alerts/divergence";
import { etagOf, parseIfMatch, withExpectedVersion } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** ACKNOWLEDGED with a reason, under CAS on the alert's version (If-Match or expected_version): 409 when it changed since you read it. */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "alerts:act");
  const { id } = await params;
  const input = parseInput(
    AlertActionInputSchema,
    withExpectedVersion(await readApiJson(request), parseIfMatch(request.headers.get("if-match"))),
  );
  const alert = await acknowledgeAlert(
    dbFor(principal),
    id,
    { expectedVersion: input.expected_version, reason: input.reason },
    actorOf(principal),
  );
  return json(alertResource(alert), { headers: { ETag: etagOf(alert.version) } });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
