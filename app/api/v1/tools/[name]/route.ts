import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { toolDetailResource } from "@/lib/adapters/api/tool-resources";
import { dbFor } from "@/lib/db/client";
import { getToolOrThrow } from "@/lib/use-cases/tools/get-tool";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ name: string }> };

/** One tool: its newest version and every version, newest first, each with its definition as registered. */
export const GET = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiOrSessionPrincipal(request, "tools:read");
  const { name } = await params;
  return json(toolDetailResource(await getToolOrThrow(dbFor(principal), name)));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
