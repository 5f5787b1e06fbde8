import { readApiJson } from "@/lib/adapters/api/context";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import {
  requireWorkflowPublisherRecorded,
  workflowListResource,
  workflowVersionResource,
} from "@/lib/adapters/api/workflow-resources";
import { dbFor } from "@/lib/db/client";
import { actorOf } from "@/lib/model/permissions";
import { listWorkflowVersions } from "@/lib/use-cases/workflows/list-workflow-versions";
import { publishWorkflow } from "@/lib/use-cases/workflows/publish-workflow";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Every version in the registry, shipped and published, with who published it, when, and its tasks. */
export const GET = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "workflows:read");
  return json(workflowListResource(await listWorkflowVersions(dbFor(principal))));
});

/**
 * Publish a definition: 201 when new, 200 when this exact content is already
 * published under its name and version (a replay), 409 when other content
 * is, 422 listing every problem at its JSON path. Admins, or a token with
 * the publish scope for workflows.
 */
export const POST = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "workflows:read");
  const db = dbFor(principal);
  await requireWorkflowPublisherRecorded(db, principal, `${request.method} ${new URL(request.url).pathname}`);
  const { kind, version } = await publishWorkflow(db, await readApiJson(request), actorOf(principal));
  const location = `/api/v1/workflows/${encodeURIComponent(version.name)}/versions/${version.version}`;
  return json(workflowVersionResource(version), {
    status: kind === "published" ? 201 : 200,
    headers: {
      Location: location,
      ETag: `"${version.digest}"`,
      ...(kind === "published" ? {} : { "Idempotent-Replayed": "true" }),
    },
  });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
