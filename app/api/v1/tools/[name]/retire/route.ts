import { readApiJson } from "@/lib/adapters/api/context";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { requireToolRegistrarRecorded, toolDetailResource } from "@/lib/adapters/api/tool-resources";
import { dbFor } from "@/lib/db/client";
import { actorOf } from "@/lib/model/permissions";
import { getToolOrThrow } from "@/lib/use-cases/tools/get-tool";
import { retireTool } from "@/lib/use-cases/tools/retire-tool";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ name: string }> };

/** Retire a tool (`{"reason": …}`): no new intents from now on; calls already recorded settle as before. */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "tools:read");
  const db = dbFor(principal);
  await requireToolRegistrarRecorded(db, principal, `${request.method} ${new URL(request.url).pathname}`);
  const { name } = await params;
  await retireTool(db, name, await readApiJson(request), actorOf(principal));
  return json(toolDetailResource(await getToolOrThrow(db, name)));
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
