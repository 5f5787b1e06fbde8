import Link from "next/link";
import { can, type Principal } from "@/lib/model/permissions";
import { inboxSummary } from "@/lib/adapters/console/inbox/inbox";
import { countWaitingReviews } from "@/lib/adapters/console/reviews/reviews";
import { navLinksFor } from "@/lib/adapters/console/shared/nav";
import { HeaderMenu } from "@/components/header-menu";
import { NavLinks } from "@/components/nav-links";
import { HeaderTools } from "@/components/search/header-tools";
import { SignOutButton } from "@/components/sign-out-button";
import "@/components/account/account.css";
import "@/components/app-header.css";
import { dbFor } from "@/lib/db/client";

export async function AppHeader({
  principal,
  passwordMustChange = false,
}: {
  principal: Principal;
  /** Holding a one-time password, the person may open /account only: no sections to offer (nor a queue to poll). */
  passwordMustChange?: boolean;
}) {
  const db = dbFor(principal);
  const [openReviews, inboxTotal] = passwordMustChange
    ? [0, null]
    : await Promise.all([
        countWaitingReviews(db),
        // Rendered with the page, so the badge never appears empty and then fills in.
        can(principal, "inbox:read") ? inboxSummary(db, principal).then((s) => s.total) : null,
      ]);
  // Only the sections this role may open; every page still checks on the server.
  const links = passwordMustChange ? [] : navLinksFor(principal);
  return (
    <header className="app-header">
      <div className="app-header__inner">
        <Link href="/tasks" className="brand">
          <span className="brand__mark" aria-hidden="true">
            V
          </span>
          <span className="brand__name">Verity</span>
          <span className="brand__tag">operations console</span>
        </Link>
        {passwordMustChange ? null : <HeaderTools />}
        <HeaderMenu>
          <NavLinks openReviews={openReviews} inboxTotal={inboxTotal} links={links} />
          <div className="app-header__user">
            <Link
              href="/account"
              className="who who--link"
              title={`Your account (${principal.identity}, tenant ${principal.tenantId})`}
            >
              <span className="visually-hidden">Your account: </span>
              <span className="who__name">{principal.displayName}</span>
              <span className="role-badge">{principal.role}</span>
              {/* Whose data everything below is: the tenant the person belongs to (docs/tenants.md). */}
              <span className="tenant-badge" data-testid="header-tenant">
                <span className="visually-hidden">, tenant </span>
                {principal.tenantId}
              </span>
            </Link>
            <SignOutButton />
          </div>
        </HeaderMenu>
      </div>
    </header>
  );
}
