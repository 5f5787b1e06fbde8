"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { ReviewQueueBadge } from "@/components/reviews/review-queue-badge";

import type { NavLink } from "@/lib/adapters/console/shared/nav";

export function NavLinks({ openReviews, links }: { openReviews: number; links: readonly NavLink[] }) {
  const pathname = usePathname();
  return (
    <nav aria-label="Main" className="app-nav">
      <ul>
        {links.map((link) => {
          const current = pathname === link.href || pathname.startsWith(`${link.href}/`);
          return (
            <li key={link.href}>
              <Link href={link.href} aria-current={current ? "page" : undefined}>
                {link.label}
                {link.href === "/reviews" ? <ReviewQueueBadge initialCount={openReviews} /> : null}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
