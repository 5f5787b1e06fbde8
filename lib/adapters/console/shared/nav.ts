/**
 * The console's sections, as plain data. Not in components/nav-links.tsx:
 * that module is "use client", and a server component (the header) that
 * imports a plain object from a client module gets a client reference, not
 * the object (its members are undefined at render in a production build).
 */
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
  people: { href: "/admin/people", label: "People" },
  agents: { href: "/admin/agents", label: "Agents" },
} as const satisfies Record<string, NavLink>;
