"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { CountBadge } from "@/components/count-badge";

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

export function NavLinks({
  openReviews,
  inboxTotal,
  links,
}: {
  openReviews: number;
  /** The person's inbox total, when their role has an inbox. */
  inboxTotal: number | null;
  links: readonly NavLink[];
}) {
  const current = currentHref(links, usePathname());
  const sections = links.filter((l) => !l.group);
  const admin = links.filter((l) => l.group === "admin");
  return (
    <nav aria-label="Main" className="app-nav">
      <ul>
        {sections.map((link) => (
          <li key={link.href}>
            <Link href={link.href} aria-current={link.href === current ? "page" : undefined}>
              {link.label}
              {link.href === "/reviews" ? <CountBadge kind="reviews" initialCount={openReviews} /> : null}
              {link.href === "/inbox" && inboxTotal !== null ? (
                <CountBadge kind="inbox" initialCount={inboxTotal} />
              ) : null}
            </Link>
          </li>
        ))}
        {admin.length > 0 ? (
          <li className="app-nav__group">
            <AdminMenu links={admin} current={current} />
          </li>
        ) : null}
      </ul>
    </nav>
  );
}

/**
 * The admin-only pages (retention, people, agents, tenants) behind one "Admin" entry:
 * a disclosure button (aria-expanded) whose list opens below it; Escape
 * closes it and puts focus back on the button, as does a click outside or
 * focus leaving it; following a link closes it.
 */
function AdminMenu({ links, current }: { links: readonly NavLink[]; current: string | undefined }) {
  const pathname = usePathname();
  const [openOn, setOpenOn] = useState<string | null>(null);
  const open = openOn === pathname;
  const button = useRef<HTMLButtonElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const inside = links.some((l) => l.href === current);

  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      // The header's own menu (narrow screens) stays open: only this list closes.
      event.stopPropagation();
      setOpenOn(null);
      button.current?.focus();
    };
    const onPointer = (event: PointerEvent) => {
      if (!box.current?.contains(event.target as Node)) setOpenOn(null);
    };
    document.addEventListener("keydown", onKey, true);
    document.addEventListener("pointerdown", onPointer);
    return () => {
      document.removeEventListener("keydown", onKey, true);
      document.removeEventListener("pointerdown", onPointer);
    };
  }, [open]);

  return (
    <div
      ref={box}
      className="admin-menu"
      onBlur={(event) => {
        const next = event.relatedTarget as Node | null;
        if (next && !box.current?.contains(next)) setOpenOn(null);
      }}
    >
      <button
        ref={button}
        type="button"
        className="admin-menu__button"
        aria-expanded={open}
        aria-controls="admin-menu-list"
        data-current={inside || undefined}
        onClick={() => setOpenOn(open ? null : pathname)}
      >
        Admin
        <span className="admin-menu__caret" aria-hidden="true" />
      </button>
      <ul id="admin-menu-list" className="admin-menu__list" hidden={!open}>
        {links.map((link) => (
          <li key={link.href}>
            <Link
              href={link.href}
              aria-current={link.href === current ? "page" : undefined}
              onClick={() => setOpenOn(null)}
            >
              {link.label}
            </Link>
          </li>
        ))}
      </ul>
    </div>
  );
}
