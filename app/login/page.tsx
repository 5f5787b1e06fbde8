import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getSessionPrincipal } from "@/lib/adapters/auth/session";
import { sameOriginPath } from "@/lib/adapters/auth/callback-url";
import { isOidcConfigured } from "@/lib/adapters/auth/oidc";
import { getEnv } from "@/lib/config/env";
import { demoUsers } from "@/lib/config/demo-accounts";
import { LoginForm } from "@/components/login-form";

export const metadata: Metadata = { title: "Sign in" };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

export default async function LoginPage({ searchParams }: Props) {
  const query = await searchParams;
  const callbackUrl = sameOriginPath(Array.isArray(query.callbackUrl) ? query.callbackUrl[0] : query.callbackUrl);
  if (await getSessionPrincipal()) redirect(callbackUrl);
  const error = typeof query.error === "string" ? query.error : undefined;
  return (
    <main id="main" className="login" tabIndex={-1}>
      <div className="login__panel">
        <div className="login__brand">
          <span className="brand__mark" aria-hidden="true">
            V
          </span>
          <div>
            <p className="login__product">Verity</p>
            <p className="login__tagline">Durable, conflict-safe state for AI agents</p>
          </div>
        </div>
        <h1 className="login__title">Sign in to the console</h1>
        <LoginForm callbackUrl={callbackUrl} initialError={error} singleSignOn={isOidcConfigured()} />
        {getEnv().VERITY_DEMO_DATA ? (
          <details className="login__demo">
            <summary>Demo accounts</summary>
            <p className="hint">
              This installation seeds demo users. Their passwords are public: never use them in production.
            </p>
            <table className="table table--compact">
              <thead>
                <tr>
                  <th scope="col">Role</th>
                  <th scope="col">Username</th>
                  <th scope="col">Password</th>
                </tr>
              </thead>
              <tbody>
                {demoUsers.map((u) => (
                  <tr key={u.username}>
                    <td>{u.role}</td>
                    <td className="mono">{u.username}</td>
                    <td className="mono">{u.password}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        ) : null}
      </div>
    </main>
  );
}
