import { AppError } from "@/lib/core/errors";

/**
 * RFC 6750 bearer credentials. Every failure is a 401 that says what to fix
 * but never echoes the token, and nothing here logs the header.
 */

/** token68 of RFC 7235: what a bearer token may contain. */
const token68 = /^[A-Za-z0-9\-._~+/]+=*$/;

export function bearerTokenOf(authorization: string | null): string {
  if (authorization === null || authorization.trim() === "") {
    throw new AppError("unauthenticated", "Send an API token: Authorization: Bearer <token>.");
  }
  const m = /^Bearer +(\S+)\s*$/i.exec(authorization.trim());
  if (!m?.[1] || !token68.test(m[1])) {
    throw new AppError("unauthenticated", "The Authorization header is not of the form: Bearer <token>.", {
      bearerError: "invalid_request",
    });
  }
  return m[1];
}

/**
 * The principal behind a request's bearer token. `authenticate` looks the
 * token up (lib/stores/api-tokens.ts in the app); unknown and revoked tokens
 * get the same answer, so the API does not reveal which tokens once existed.
 */
export async function authenticateBearer<P>(
  request: Request,
  authenticate: (token: string) => Promise<P | null>,
): Promise<P> {
  const token = bearerTokenOf(request.headers.get("authorization"));
  const principal = await authenticate(token);
  if (!principal)
    throw new AppError("unauthenticated", "The API token is unknown or revoked.", { bearerError: "invalid_token" });
  return principal;
}
