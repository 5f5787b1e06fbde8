import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { withoutEmptyFields } from "@/lib/adapters/console/shared/clean-query";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { can } from "@/lib/model/permissions";
import { alertsHref, loadAlertsPage, parseAlertFilters } from "@/lib/adapters/console/alerts/alerts";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { AlertsView } from "@/components/alerts/alerts-view";

export const metadata: Metadata = { title: "Alerts" };

export default async function AlertsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  // Filters live in the URL with the empty ones left out (a GET form sends every field).
  const clean = withoutEmptyFields("/alerts", params);
  if (clean) redirect(clean);
  const access = await authorizePage("alerts:read", alertsHref(parseAlertFilters(params).filters));
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  return (
    <AlertsView
      data={await loadAlertsPage(await consoleDb(), params)}
      canAct={can(access.principal, "alerts:act")}
      role={access.principal.role}
    />
  );
}
