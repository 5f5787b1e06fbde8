import type { Metadata } from "next";
import { can } from "@/lib/model/permissions";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadWorkflowRegistry } from "@/lib/adapters/console/workflows/workflow-pages";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { WorkflowRegistryView } from "@/components/workflows/workflow-registry-view";

export const metadata: Metadata = { title: "Workflows" };

export default async function WorkflowsPage() {
  const access = await authorizePage("workflows:read", "/workflows");
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  return (
    <WorkflowRegistryView
      workflows={await loadWorkflowRegistry(await consoleDb())}
      canMigrate={can(access.principal, "workflows:migrate")}
    />
  );
}
