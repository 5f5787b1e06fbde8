import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadWorkflowMigration, nameFromParam } from "@/lib/adapters/console/workflows/workflow-pages";
import { workflowMigrateHref } from "@/lib/adapters/console/workflows/workflow-href";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { WorkflowMigrationView } from "@/components/workflows/workflow-migration-view";

type Props = {
  params: Promise<{ name: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
};

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Move ${(await params).name} tasks` };
}

export default async function WorkflowMigratePage({ params, searchParams }: Props) {
  const name = nameFromParam((await params).name);
  const query = await searchParams;
  const access = await authorizePage("workflows:migrate", name ? workflowMigrateHref(name) : "/workflows");
  if (!access.ok)
    return (
      <ForbiddenNotice
        reason={`${access.reason} Moving running tasks to another version rewrites their state, like a restore: engineers and administrators do it.`}
      />
    );
  const data = name ? await loadWorkflowMigration(await consoleDb(), name, query.from, query.to) : null;
  if (!data) notFound();
  return <WorkflowMigrationView {...data} />;
}
