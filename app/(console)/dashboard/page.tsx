import type { Metadata } from "next";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadDashboard } from "@/lib/adapters/console/dashboard/dashboard";
import { inboxSummary } from "@/lib/adapters/console/inbox/inbox";
import { can } from "@/lib/model/permissions";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { DashboardView } from "@/components/dashboard/dashboard-view";

export const metadata: Metadata = { title: "Dashboard" };

export default async function DashboardPage() {
  const access = await authorizePage("tasks:read", "/dashboard");
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const db = await consoleDb();
  const [dashboard, inbox] = await Promise.all([
    loadDashboard(db),
    can(access.principal, "inbox:read") ? inboxSummary(db, access.principal) : null,
  ]);
  return <DashboardView initial={dashboard} inboxTotal={inbox?.total ?? null} />;
}
