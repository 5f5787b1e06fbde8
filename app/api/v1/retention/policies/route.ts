import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { retentionTermResource } from "@/lib/adapters/api/retention-resources";
import { dbFor } from "@/lib/db/client";
import { listRetentionTerms } from "@/lib/stores/retention-policies";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** The caller's tenant's retention term for every data class, each with its version. */
export const GET = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "audit:read");
  const terms = await listRetentionTerms(dbFor(principal));
  return json({ items: terms.map(retentionTermResource), is_set: terms.some((t) => t.keepDays !== null) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
