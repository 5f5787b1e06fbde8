import { z } from "zod";
import { parseQuery, requireApiPrincipal } from "@/lib/adapters/api/context";
import { workflowResource } from "@/lib/adapters/api/workflow-resources";
import { workflowDefinitions } from "@/lib/model/workflows";
import { AppError } from "@/lib/core/errors";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

const WorkflowQuerySchema = z.strictObject({ version: z.coerce.number().int().min(1).optional() });

/** One workflow definition: the newest version, or `?version=N`. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ name: string }> }) => {
  await requireApiPrincipal(request, "workflows:read");
  const { name } = await params;
  const { version } = parseQuery(WorkflowQuerySchema, queryOf(request.url));
  const def = workflowDefinitions
    .filter((d) => d.name === name && (version === undefined || d.version === version))
    .sort((a, b) => b.version - a.version)[0];
  if (!def)
    throw new AppError(
      "not_found",
      version === undefined ? `Workflow ${name} does not exist.` : `Workflow ${name} has no version ${version}.`,
    );
  return json(workflowResource(def), { headers: { ETag: `"${def.digest}"` } });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
