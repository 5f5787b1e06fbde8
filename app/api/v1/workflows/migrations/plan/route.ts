import { readApiJson } from "@/lib/adapters/api/context";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { migrationPlanResource } from "@/lib/adapters/api/workflow-resources";
import { dbFor } from "@/lib/db/client";
import { planWorkflowMigration } from "@/lib/use-cases/workflows/plan-workflow-migration";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** The dry run of moving running tasks to a newer version: per task, where it would go and what refuses it. Writes nothing. */
export const POST = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "workflows:migrate");
  return json(migrationPlanResource(await planWorkflowMigration(dbFor(principal), await readApiJson(request))));
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
