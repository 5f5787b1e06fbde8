import { parseInput, readOptionalApiJson } from "@/lib/adapters/api/context";
import { reconcileResource } from "@/lib/adapters/api/alert-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { AlertReconcileInputSchema, reconcileAlert } from "@/lib/use-cases/alerts/alert-actions";
import { getConnectors } from "@/lib/connectors/effects";
import { etagOf, parseIfMatch, withExpectedVersion } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * Reconcile the alert's execution with its provider now: RESOLVED when the
 * ledger and the provider agree (the provider's answer as evidence),
 * otherwise the attempt is recorded and `agreed: false` says why it stays open.
 */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "alerts:act");
  const { id } = await params;
  const input = parseInput(
    AlertReconcileInputSchema,
    withExpectedVersion((await readOptionalApiJson(request)) ?? {}, parseIfMatch(request.headers.get("if-match"))),
  );
  const result = await reconcileAlert(
    dbFor(principal),
    id,
    { expectedVersion: input.expected_version },
    actorOf(principal),
    getConnectors(),
  );
  return json(reconcileResource(result), { headers: { ETag: etagOf(result.alert.version) } });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
