import type { PersonRow } from "@/lib/stores/users";
import { PasswordChangeForm } from "@/components/account/password-change-form";
import "@/components/account/account.css";

/** /account: who you are signed in as, and your password. */
export function AccountView({ person, identity }: { person: PersonRow; identity: string }) {
  return (
    <div className="account-page">
      <header className="page-header">
        <div className="page-header__row">
          <h1>Your account</h1>
        </div>
        <p className="lede">
          Signed in as <strong>{person.displayName}</strong> (<code>{person.username}</code>), role {person.role}. Your
          audit entries name you as <code className="account-identity">{identity}</code>.
        </p>
      </header>

      <section className="card" aria-labelledby="account-password-title">
        <h2 id="account-password-title">Password</h2>
        {!person.hasPassword ? (
          <div className="notice notice--info" role="status">
            You sign in through single sign-on: Verity holds no password of yours. Change it at your identity provider;
            signing out here ends this session only.
          </div>
        ) : (
          <>
            {person.passwordMustChange ? (
              <div className="notice notice--warning" role="alert" data-testid="password-must-change">
                <p>
                  <strong>Choose your own password to continue.</strong> You signed in with a one-time password that an
                  administrator has seen. Until you replace it, the rest of the console stays closed to you.
                </p>
              </div>
            ) : (
              <p className="hint">
                Changing your password ends your sessions in every other browser; this one stays signed in.
              </p>
            )}
            <PasswordChangeForm oneTime={person.passwordMustChange} />
          </>
        )}
      </section>
    </div>
  );
}
