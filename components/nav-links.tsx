"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { ReviewQueueBadge } from "@/components/reviews/review-queue-badge";
import { InboxBadge } from "@/components/inbox/inbox-badge";

import type { NavLink } from "@/lib/adapters/console/shared/nav";

/**
 * The longest section address the path is in: /audit/retention is
 * Retention's page, not the audit log's, though both addresses contain it.
 */
function currentHref(links: readonly NavLink[], pathname: string): string | undefined {
  let current: string | undefined;
  for (const { href } of links) {
    const inside = pathname === href || pathname.startsWith(`${href}/`);
    if (inside && (!current || href.length > current.length)) current = href;
  }
  return current;
}

export function NavLinks({ openReviews, links }: { openReviews: number; links: readonly NavLink[] }) {
  const current = currentHref(links, usePathname());
  return (
    <nav aria-label="Main" className="app-nav">
      <ul>
        {links.map((link) => (
          <li key={link.href}>
            <Link href={link.href} aria-current={link.href === current ? "page" : undefined}>
              {link.label}
              {link.href === "/reviews" ? <ReviewQueueBadge initialCount={openReviews} /> : null}
              {link.href === "/inbox" ? <InboxBadge /> : null}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
