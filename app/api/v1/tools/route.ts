import { readApiJson } from "@/lib/adapters/api/context";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { requireToolRegistrarRecorded, toolListResource, toolVersionResource } from "@/lib/adapters/api/tool-resources";
import { dbFor } from "@/lib/db/client";
import { actorOf } from "@/lib/model/permissions";
import { listTools } from "@/lib/use-cases/tools/get-tool";
import { registerTool } from "@/lib/use-cases/tools/register-tool";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Every tool, built in and registered, with its newest version. */
export const GET = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "tools:read");
  return json(toolListResource(await listTools(dbFor(principal))));
});

/**
 * Register a tool or a new version: 201 when new, 200 when this exact
 * content is already registered (a replay), 409 when other content is, 422
 * listing every problem at its JSON path. Admins, or a token with the
 * publish scope for tools.
 */
export const POST = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "tools:read");
  const db = dbFor(principal);
  await requireToolRegistrarRecorded(db, principal, `${request.method} ${new URL(request.url).pathname}`);
  const { kind, version } = await registerTool(db, await readApiJson(request), actorOf(principal));
  return json(toolVersionResource(version), {
    status: kind === "registered" ? 201 : 200,
    headers: {
      Location: `/api/v1/tools/${encodeURIComponent(version.name)}`,
      ETag: `"${version.digest}"`,
      ...(kind === "registered" ? {} : { "Idempotent-Replayed": "true" }),
    },
  });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
