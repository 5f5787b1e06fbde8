import type { ReactNode } from "react";
import { getConsoleSession } from "@/lib/adapters/auth/session";
import { AppHeader } from "@/components/app-header";

/**
 * The signed-in shell. It does not guard anything: every page below checks
 * its own permission (a layout is not re-run on client navigation), and a
 * page without a session redirects to /login with its own address.
 */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  // The header for a person with a one-time password too: /account is theirs, and so is signing out.
  const session = await getConsoleSession();
  return (
    <>
      {session ? <AppHeader principal={session.principal} passwordMustChange={session.passwordMustChange} /> : null}
      <main id="main" className="page" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
