import { AppError } from "@/lib/core/errors";
import { withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Anything under /api/v1 that no route serves: a problem+json 404, not the console's HTML page. */
const notFound = withProblems(async (request) => {
  throw new AppError(
    "not_found",
    `No endpoint ${request.method} ${new URL(request.url).pathname}. See /api/v1/openapi.json.`,
  );
});

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
