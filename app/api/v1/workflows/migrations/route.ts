import { readApiJson } from "@/lib/adapters/api/context";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { migrationResultResource } from "@/lib/adapters/api/workflow-resources";
import { dbFor } from "@/lib/db/client";
import { actorOf } from "@/lib/model/permissions";
import { applyWorkflowMigration } from "@/lib/use-cases/workflows/apply-workflow-migration";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * Applies a plan's tasks, each at the version the plan saw: moved as a CAS
 * transition (audited), or refused with the reason (stale plan, an invariant
 * of the new version). 200 with each task's outcome.
 */
export const POST = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "workflows:migrate");
  return json(
    migrationResultResource(
      await applyWorkflowMigration(dbFor(principal), await readApiJson(request), actorOf(principal)),
    ),
  );
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
