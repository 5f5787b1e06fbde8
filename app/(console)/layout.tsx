import type { ReactNode } from "react";
import { getConsoleSession } from "@/lib/adapters/auth/session";
import { isAppError } from "@/lib/core/errors";
import { AppHeader } from "@/components/app-header";
import { EmptyState } from "@/components/empty-state";
import { SignOutButton } from "@/components/sign-out-button";
import { LiveEventsProvider } from "@/components/live/live-events";

/**
 * The signed-in shell. It does not guard anything: every page below checks
 * its own permission (a layout is not re-run on client navigation), and a
 * page without a session redirects to /login with its own address.
 */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  // The header for a person with a one-time password too: /account is theirs, and so is signing out.
  let session;
  try {
    session = await getConsoleSession();
  } catch (error) {
    // A suspended tenant's person (lib/adapters/auth/tenant-standing.ts): refused every page, told why in words, not
    // shown a crash; the page below is not rendered.
    if (!isAppError(error) || error.code !== "forbidden") throw error;
    return (
      <main id="main" className="page" tabIndex={-1}>
        <EmptyState title="You cannot use the console now" tone="error" level={1}>
          <p>{error.message}</p>
          <p>
            <SignOutButton />
          </p>
        </EmptyState>
      </main>
    );
  }
  // One stream of change events for every live part of every page (docs/live-updates.md).
  return (
    <LiveEventsProvider enabled={session !== null && !session.passwordMustChange}>
      {session ? <AppHeader principal={session.principal} passwordMustChange={session.passwordMustChange} /> : null}
      <main id="main" className="page" tabIndex={-1}>
        {children}
      </main>
    </LiveEventsProvider>
  );
}
