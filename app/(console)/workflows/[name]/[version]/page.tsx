import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { can } from "@/lib/model/permissions";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadWorkflowVersion, nameFromParam, versionFromParam } from "@/lib/adapters/console/workflows/workflow-pages";
import { workflowVersionHref } from "@/lib/adapters/console/workflows/workflow-href";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { WorkflowVersionView } from "@/components/workflows/workflow-version-view";

type Props = { params: Promise<{ name: string; version: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { name, version } = await params;
  return { title: `${name} v${version}` };
}

export default async function WorkflowVersionPage({ params }: Props) {
  const { name: rawName, version: rawVersion } = await params;
  const name = nameFromParam(rawName);
  const version = versionFromParam(rawVersion);
  const access = await authorizePage(
    "workflows:read",
    name && version ? workflowVersionHref(name, version) : "/workflows",
  );
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const data = name && version ? await loadWorkflowVersion(await consoleDb(), name, version) : null;
  if (!data) notFound();
  return <WorkflowVersionView {...data} canMigrate={can(access.principal, "workflows:migrate")} />;
}
