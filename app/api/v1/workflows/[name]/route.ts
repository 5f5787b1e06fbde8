import { z } from "zod";
import { parseQuery } from "@/lib/adapters/api/context";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { workflowVersionResource } from "@/lib/adapters/api/workflow-resources";
import { dbFor } from "@/lib/db/client";
import { getWorkflow } from "@/lib/use-cases/workflows/get-workflow";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

const WorkflowQuerySchema = z.strictObject({ version: z.coerce.number().int().min(1).optional() });

/** The newest version of a workflow (or `?version=N`, the same as /versions/N). */
export const GET = withProblems(async (request, { params }: { params: Promise<{ name: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "workflows:read");
  const { name } = await params;
  const { version } = parseQuery(WorkflowQuerySchema, queryOf(request.url));
  const found = await getWorkflow(dbFor(principal), name, version);
  return json(workflowVersionResource(found), { headers: { ETag: `"${found.digest}"` } });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
