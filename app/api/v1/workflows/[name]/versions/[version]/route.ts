import { z } from "zod";
import { parseInput } from "@/lib/adapters/api/context";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { workflowVersionResource } from "@/lib/adapters/api/workflow-resources";
import { dbFor } from "@/lib/db/client";
import { getWorkflow } from "@/lib/use-cases/workflows/get-workflow";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

const VersionSchema = z.strictObject({ version: z.coerce.number().int().min(1).max(1_000_000_000) });

/** One published version: immutable, so its digest is also its ETag forever. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ name: string; version: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "workflows:read");
  const { name, version: raw } = await params;
  const { version } = parseInput(VersionSchema, { version: raw });
  const found = await getWorkflow(dbFor(principal), name, version);
  return json(workflowVersionResource(found), { headers: { ETag: `"${found.digest}"` } });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
