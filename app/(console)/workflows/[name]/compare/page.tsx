import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { can } from "@/lib/model/permissions";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadWorkflowCompare, nameFromParam } from "@/lib/adapters/console/workflows/workflow-pages";
import { workflowCompareHref } from "@/lib/adapters/console/workflows/workflow-href";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { WorkflowDiffView } from "@/components/workflows/workflow-diff-view";

type Props = {
  params: Promise<{ name: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
};

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Compare ${(await params).name} versions` };
}

export default async function WorkflowComparePage({ params, searchParams }: Props) {
  const name = nameFromParam((await params).name);
  const query = await searchParams;
  const access = await authorizePage("workflows:read", name ? workflowCompareHref(name) : "/workflows");
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const data = name ? await loadWorkflowCompare(await consoleDb(), name, query.from, query.to) : null;
  if (!data) notFound();
  return <WorkflowDiffView {...data} canMigrate={can(access.principal, "workflows:migrate")} />;
}
