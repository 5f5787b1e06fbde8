import { parseInput, readApiJson } from "@/lib/api/context";
import { alertResource } from "@/lib/api/alert-resources";
import { requireApiOrSessionPrincipal } from "@/lib/api/session-or-bearer";
import { actorOf } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db";
import { AlertActionInputSchema } from "@/lib/engine/alert-actions";
import { acknowledgeAlert } from "@/lib/engine/divergence";
import { etagOf, parseIfMatch, withExpectedVersion } from "@/lib/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

/** ACKNOWLEDGED with a reason, under CAS on the alert's version (If-Match or expected_version): 409 when it changed since you read it. */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "alerts:act");
  const { id } = await params;
  const input = parseInput(AlertActionInputSchema, withExpectedVersion(await readApiJson(request), parseIfMatch(request.headers.get("if-match"))));
  const alert = await acknowledgeAlert(getDb(), id, { expectedVersion: input.expected_version, reason: input.reason }, actorOf(principal));
  return json(alertResource(alert), { headers: { ETag: etagOf(alert.version) } });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
