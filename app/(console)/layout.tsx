import type { ReactNode } from "react";
import { getSessionPrincipal } from "@/lib/adapters/auth/session";
import { AppHeader } from "@/components/app-header";

/**
 * The signed-in shell. It does not guard anything: every page below checks
 * its own permission (a layout is not re-run on client navigation), and a
 * page without a session redirects to /login with its own address.
 */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const principal = await getSessionPrincipal();
  return (
    <>
      {principal ? <AppHeader principal={principal} /> : null}
      <main id="main" className="page" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
