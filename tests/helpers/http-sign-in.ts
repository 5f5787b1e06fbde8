/**
 * Signs in with the password form as a browser does (next-auth's CSRF
 * token, then the credentials callback, cookies carried between the two) and
 * returns the session cookie as a `Cookie` header value. For tests and
 * benchmarks that speak plain HTTP to a running server, without a browser.
 */
export async function signInOverHttp(baseUrl: string, who: { username: string; password: string }): Promise<string> {
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair = ""] = c.split(";");
      const at = pair.indexOf("=");
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  keep(csrf);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookieHeader() },
    body: new URLSearchParams({ csrfToken, username: who.username, password: who.password, json: "true" }),
    redirect: "manual",
  });
  keep(res);
  const session = jar.get("next-auth.session-token");
  if (!session) throw new Error(`sign-in set no session cookie (${res.status}): ${await res.text()}`);
  return `next-auth.session-token=${session}`;
}
