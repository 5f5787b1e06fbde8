import type { Metadata } from "next";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadDashboard } from "@/lib/adapters/console/dashboard/dashboard";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { DashboardView } from "@/components/dashboard/dashboard-view";

export const metadata: Metadata = { title: "Dashboard" };

export default async function DashboardPage() {
  const access = await authorizePage("tasks:read", "/dashboard");
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  return <DashboardView initial={await loadDashboard(await consoleDb())} />;
}
