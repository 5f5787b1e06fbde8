import { listExportResponse } from "@/lib/adapters/console/exports/list-export-route";
import { otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** The tasks list as CSV or JSON Lines, with the page's filters (lib/use-cases/exports/list-exports.ts). */
export const GET = withProblems(async (request) => listExportResponse(request, "tasks"));

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
