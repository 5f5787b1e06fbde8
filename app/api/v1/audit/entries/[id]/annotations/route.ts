import { readApiJson } from "@/lib/adapters/api/context";
import { AnnotationRequestSchema, auditEntryResource } from "@/lib/adapters/api/audit-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { actorOf } from "@/lib/model/permissions";
import { parseOrThrow } from "@/lib/core/validation";
import { dbFor } from "@/lib/db/client";
import { addAnnotation } from "@/lib/use-cases/audit/annotate-audit-entry";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/**
 * A person's correction of entry {id}: appended to the entry's own chain as
 * annotation.added, bound to the entry's hash, allowed under a legal hold.
 * audit:annotate (operators, auditors, admins) and a person: the console
 * session, or a person's token; an agent's is refused, whatever its role.
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "audit:annotate");
  const { id } = await params;
  const body = parseOrThrow(AnnotationRequestSchema, await readApiJson(request));
  const entry = await addAnnotation(dbFor(principal), { ...body, entry_id: id }, actorOf(principal));
  return json(auditEntryResource(entry), { status: 201 });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
