import { NextResponse, type NextRequest } from "next/server";
import {
  apiContentSecurityPolicy,
  consoleContentSecurityPolicy,
  isHttpsRequest,
  newNonce,
  securityHeadersOf,
} from "@/lib/adapters/http/security-headers";

/**
 * Security headers on every response (lib/adapters/http/security-headers.ts).
 * A page's CSP carries a fresh nonce; Next.js finds it in the request's CSP
 * header and sets it on the scripts it renders, which is why every page
 * renders per request (app/layout.tsx).
 */
export function proxy(request: NextRequest): NextResponse {
  const isApi = request.nextUrl.pathname.startsWith("/api/");
  const csp = isApi
    ? apiContentSecurityPolicy
    : consoleContentSecurityPolicy(newNonce(), { development: process.env.NODE_ENV === "development" });
  const requestHeaders = new Headers(request.headers);
  if (!isApi) requestHeaders.set("Content-Security-Policy", csp);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  const https = isHttpsRequest(request.url, request.headers.get("x-forwarded-proto"));
  for (const [name, value] of Object.entries(securityHeadersOf(csp, https))) response.headers.set(name, value);
  return response;
}

export const config = {
  // Built assets carry no document; next.config.js gives them nosniff.
  matcher: ["/((?!_next/static|_next/image|favicon.ico).*)"],
};
