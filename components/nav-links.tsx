"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { ReviewQueueBadge } from "@/components/reviews/review-queue-badge";

export interface NavLink {
  href: string;
  label: string;
}

/** The console's sections; the header passes only those the signed-in role may open. */
export const consoleLinks = {
  dashboard: { href: "/dashboard", label: "Dashboard" },
  tasks: { href: "/tasks", label: "Tasks" },
  reviews: { href: "/reviews", label: "Review queue" },
  alerts: { href: "/alerts", label: "Alerts" },
  audit: { href: "/audit", label: "Audit log" },
  workflows: { href: "/workflows", label: "Workflows" },
} as const satisfies Record<string, NavLink>;

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
