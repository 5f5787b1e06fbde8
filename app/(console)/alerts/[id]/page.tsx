import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { can } from "@/lib/model/permissions";
import { loadAlertDetail } from "@/lib/adapters/console/alerts/alerts";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { AlertDetailView } from "@/components/alerts/alert-detail-view";

export const metadata: Metadata = { title: "Alert" };

export default async function AlertPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const access = await authorizePage("alerts:read", `/alerts/${encodeURIComponent(id)}`);
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const data = await loadAlertDetail(await consoleDb(), id);
  if (!data) notFound();
  return <AlertDetailView data={data} canAct={can(access.principal, "alerts:act")} role={access.principal.role} />;
}
