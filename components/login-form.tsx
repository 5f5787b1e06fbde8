"use client";

import { signIn } from "next-auth/react";
import { useRef, useState, type FormEvent } from "react";

/** When a throttled sign-in may be tried again, in the reader's words ("SignInThrottled.<epoch ms>"). */
function describeRetry(code: string): string {
  const retryAt = new Date(Number(code.slice("SignInThrottled.".length)));
  if (Number.isNaN(retryAt.getTime())) return "Try again in a few minutes.";
  const minutes = Math.max(1, Math.ceil((retryAt.getTime() - Date.now()) / 60_000));
  return `Try again after ${retryAt.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })} (in about ${minutes} minute${minutes === 1 ? "" : "s"}).`;
}

/** next-auth's error codes, in words. */
function describeSignInError(code: string): string {
  if (code.startsWith("SignInThrottled"))
    return `Too many failed sign-ins for this account or from this address, so sign-in is paused. ${describeRetry(code)}`;
  switch (code) {
    case "CredentialsSignin":
      return "That username and password do not match. Check both and try again.";
    case "SignInUnavailable":
      return "Sign-in is unavailable right now: the user database could not be reached. Try again in a moment.";
    // The signIn callback refused the provider's answer (lib/adapters/auth/next-auth-options.ts).
    case "AccessDenied":
      return "You signed in with single sign-on, but Verity did not let you in: none of your groups there maps to a Verity role, or your Verity account is disabled. Ask an administrator to add you to a group that Verity accepts.";
    // next-auth's codes for a sign-on cancelled at the provider (Callback), a provider that could not be reached or an answer it could not use.
    case "OAuthSignin":
    case "OAuthCallback":
    case "Callback":
      return "Single sign-on did not complete: it was cancelled at the sign-on provider, or the provider could not be reached, or its answer could not be used. Try again; if it keeps failing, tell an administrator (the server's log says which).";
    case "SessionRequired":
      return "Sign in to see that page.";
    default:
      return `Sign-in failed (${code}). Try again; if it keeps failing, tell an administrator.`;
  }
}

export function LoginForm({
  callbackUrl,
  initialError,
  singleSignOn = false,
}: {
  callbackUrl: string;
  initialError?: string;
  /** Offer "Sign in with single sign-on" (VERITY_OIDC_ISSUER is set). */
  singleSignOn?: boolean;
}) {
  const [error, setError] = useState<string | null>(initialError ? describeSignInError(initialError) : null);
  // Only a wrong or missing username and password marks the fields: a refused single sign-on or a pause is not about them.
  const [fieldsInvalid, setFieldsInvalid] = useState(false);
  const [pending, setPending] = useState(false);
  const passwordRef = useRef<HTMLInputElement>(null);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const username = String(data.get("username") ?? "").trim();
    const password = String(data.get("password") ?? "");
    if (!username || !password) {
      setError("Enter both your username and your password.");
      setFieldsInvalid(true);
      return;
    }
    setPending(true);
    setError(null);
    setFieldsInvalid(false);
    try {
      const result = await signIn("credentials", { redirect: false, username, password, callbackUrl });
      if (!result || result.error) {
        setError(describeSignInError(result?.error ?? "Unknown"));
        setFieldsInvalid(result?.error === "CredentialsSignin");
        setPending(false);
        if (passwordRef.current) {
          passwordRef.current.value = "";
          passwordRef.current.focus();
        }
        return;
      }
      // A full navigation, so every server component renders with the new session cookie.
      window.location.assign(callbackUrl);
    } catch {
      setError("The server could not be reached. Check your connection and try again.");
      setPending(false);
    }
  }

  return (
    <form className="login__form" onSubmit={onSubmit} noValidate aria-describedby={error ? "login-error" : undefined}>
      {error ? (
        <div id="login-error" className="notice notice--error" role="alert">
          {error}
        </div>
      ) : null}
      <div className="field">
        <label htmlFor="username">Username</label>
        <input
          id="username"
          name="username"
          type="text"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          required
          autoFocus
          aria-invalid={fieldsInvalid || undefined}
        />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          ref={passwordRef}
          aria-invalid={fieldsInvalid || undefined}
        />
      </div>
      <button type="submit" className="button button--primary button--block" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </button>
      {singleSignOn ? (
        <button
          type="button"
          className="button button--block"
          disabled={pending}
          onClick={() => {
            setPending(true);
            void signIn("oidc", { callbackUrl });
          }}
        >
          Sign in with single sign-on
        </button>
      ) : null}
    </form>
  );
}
