import { getOpenApiDocument } from "@/lib/adapters/openapi/openapi-document";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Public on purpose: the contract is no secret, and clients need it before they hold a token. */
export const GET = withProblems(async () => json(getOpenApiDocument()));

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
