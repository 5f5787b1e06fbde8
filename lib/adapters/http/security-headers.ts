/**
 * The security headers of every response (proxy.ts sets them). The console's
 * scripts run under a nonce-based Content-Security-Policy: a fresh nonce per
 * request, which Next.js reads from the request's own CSP header and puts on
 * every script it renders; 'strict-dynamic' lets those scripts load the
 * route's chunks, and nothing else runs. Style attributes that React renders
 * on the server (a chart's swatch colour, a virtual list's offsets) are
 * allowed by `style-src-attr`: an attribute can set a property, never load or
 * select anything, while `<style>` and style sheets need the nonce or this
 * origin. The API answers JSON, never a document: its policy allows nothing.
 */

/** Development mode needs eval for React's debugging and the hot reloader; production never does. */
export function consoleContentSecurityPolicy(nonce: string, options: { development?: boolean } = {}): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${options.development ? " 'unsafe-eval'" : ""}`,
    `style-src 'self' 'nonce-${nonce}'`,
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export const apiContentSecurityPolicy =
  "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * HSTS only on a request that reached us over HTTPS (directly or through a
 * proxy that says so): a browser ignores it over plain HTTP anyway (RFC 6797
 * §8.1), and the quick start on http://localhost must not teach a browser to
 * refuse http for that host. One year, without includeSubDomains: Verity
 * does not know what else runs under its parent domain.
 */
export const strictTransportSecurity = "max-age=31536000";

/** The headers every response carries, whatever it is. */
export const staticSecurityHeaders: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "strict-origin-when-cross-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()",
  // For browsers older than CSP's frame-ancestors.
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
};

/**
 * The security headers of one response: its Content-Security-Policy, the
 * static set, and HSTS when the request reached us over HTTPS. proxy.ts sets
 * them on what Next answers, api-router.ts on the API requests it answers.
 */
export function securityHeadersOf(contentSecurityPolicy: string, https: boolean): Record<string, string> {
  return {
    "Content-Security-Policy": contentSecurityPolicy,
    ...staticSecurityHeaders,
    ...(https ? { "Strict-Transport-Security": strictTransportSecurity } : {}),
  };
}

/** A nonce: 128 random bits, base64 (CSP's nonce-source grammar). */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

export function isHttpsRequest(url: string, forwardedProto: string | null): boolean {
  return new URL(url).protocol === "https:" || forwardedProto?.split(",")[0]?.trim().toLowerCase() === "https";
}
