import { can, type Permission, type Principal } from "@/lib/model/permissions";

/**
 * The console's sections, as plain data. Not in components/nav-links.tsx:
 * that module is "use client", and a server component (the header) that
 * imports a plain object from a client module gets a client reference, not
 * the object (its members are undefined at render in a production build).
 */
export interface NavLink {
  href: string;
  label: string;
  /**
   * "admin": under the header's one Admin menu, not a section of its own, so
   * the header keeps one line at 1280 px for every role, the person's name
   * whole (a platform admin had eleven sections).
   */
  group?: "admin";
}

/**
 * Every section in header order, each with the permission its page checks
 * (`authorizePage` in app/(console)/…/page.tsx): a role sees a link exactly
 * when the page would open for it.
 */
const consoleSections: ReadonlyArray<NavLink & { permission: Permission }> = [
  { href: "/dashboard", label: "Dashboard", permission: "tasks:read" },
  // Everything waiting on a person that the role acts on; an auditor acts on nothing, so has no inbox.
  { href: "/inbox", label: "Inbox", permission: "inbox:read" },
  { href: "/tasks", label: "Tasks", permission: "tasks:read" },
  { href: "/reviews", label: "Review queue", permission: "tasks:read" },
  { href: "/executions", label: "Executions", permission: "tasks:read" },
  { href: "/alerts", label: "Alerts", permission: "alerts:read" },
  { href: "/audit", label: "Audit log", permission: "audit:read" },
  // Admins only (audit:retention): under the Admin menu with the other admin-only pages.
  { href: "/audit/retention", label: "Retention", permission: "audit:retention", group: "admin" },
  { href: "/workflows", label: "Workflows", permission: "workflows:read" },
  { href: "/admin/people", label: "People", permission: "people:manage", group: "admin" },
  { href: "/admin/agents", label: "Agents", permission: "agents:manage", group: "admin" },
  // Platform admins only (the flag, not a role): the register of tenants.
  { href: "/platform/tenants", label: "Tenants", permission: "tenants:manage", group: "admin" },
];

/** The sections this principal may open; every page still checks on the server. */
export function navLinksFor(principal: Pick<Principal, "role" | "platformAdmin">): NavLink[] {
  return consoleSections
    .filter((section) => can(principal, section.permission))
    .map(({ href, label, group }) => (group ? { href, label, group } : { href, label }));
}
