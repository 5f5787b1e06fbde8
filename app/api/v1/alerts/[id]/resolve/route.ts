import { parseInput, readApiJson } from "@/lib/adapters/api/context";
import { alertResource } from "@/lib/adapters/api/alert-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { AlertActionInputSchema } from "@/lib/use-cases/alerts/alert-actions";
import { resolveDivergence } from "@/lib/use-cases/alerts/divergence";
import { etagOf, parseIfMatch, withExpectedVersion } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** RESOLVED with the correction made (reason), under CAS on the alert's version. */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "alerts:act");
  const { id } = await params;
  const input = parseInput(
    AlertActionInputSchema,
    withExpectedVersion(await readApiJson(request), parseIfMatch(request.headers.get("if-match"))),
  );
  const alert = await resolveDivergence(
    dbFor(principal),
    id,
    { expectedVersion: input.expected_version, resolution: input.reason },
    actorOf(principal),
  );
  return json(alertResource(alert), { headers: { ETag: etagOf(alert.version) } });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
