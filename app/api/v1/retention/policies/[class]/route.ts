import { readApiJson } from "@/lib/adapters/api/context";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { retentionTermResource } from "@/lib/adapters/api/retention-resources";
import { dbFor } from "@/lib/db/client";
import { actorOf } from "@/lib/model/permissions";
import { getRetentionTerm } from "@/lib/stores/retention-policies";
import { changeRetentionTerm, dataClassOrThrow } from "@/lib/use-cases/retention/retention-terms";
import { etagOf, parseIfMatch, withExpectedVersion } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ class: string }> };

/** A class never set has version 0 and no ETag (an ETag names a version from 1). */
const versionHeaders = (version: number): HeadersInit => (version > 0 ? { ETag: etagOf(version) } : {});

/** The caller's tenant's term for one data class. */
export const GET = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "audit:read");
  const dataClass = dataClassOrThrow((await params).class);
  const term = await getRetentionTerm(dbFor(principal), dataClass);
  return json(retentionTermResource(term), { headers: versionHeaders(term.version) });
});

/**
 * Sets or clears (keep_days null) the class's term, under compare-and-swap
 * on its version (If-Match or expected_version): 409 when it changed since
 * it was read. audit:retention (admins), as the CLI and the console's form.
 */
export const PUT = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "audit:retention");
  const dataClass = dataClassOrThrow((await params).class);
  const body = withExpectedVersion(await readApiJson(request), parseIfMatch(request.headers.get("if-match")));
  const term = await changeRetentionTerm(dbFor(principal), dataClass, body, actorOf(principal));
  return json(retentionTermResource(term), { headers: versionHeaders(term.version) });
});

export const { POST, PATCH, DELETE } = otherMethods(["GET", "PUT"]);
