import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadExecutionDetail } from "@/lib/adapters/console/executions/execution-detail";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { ExecutionDetailView } from "@/components/executions/execution-detail-view";

export const metadata: Metadata = { title: "Execution" };

export default async function ExecutionPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const access = await authorizePage("tasks:read", `/executions/${encodeURIComponent(id)}`);
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const data = await loadExecutionDetail(await consoleDb(), id, access.principal);
  if (!data) notFound();
  return <ExecutionDetailView data={data} />;
}
