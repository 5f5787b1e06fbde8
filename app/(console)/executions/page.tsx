import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { withoutEmptyFields } from "@/lib/adapters/console/shared/clean-query";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { loadExecutionList } from "@/lib/adapters/console/executions/executions";
import { executionListHref, parseExecutionListParams } from "@/lib/adapters/console/executions/executions-query";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { listKnownToolNames } from "@/lib/use-cases/tools/get-tool";
import { ExecutionListView } from "@/components/executions/execution-list-view";

export const metadata: Metadata = { title: "Executions" };

export default async function ExecutionsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const query = await searchParams;
  // Filters live in the URL with the empty ones left out (a GET form sends every field).
  const clean = withoutEmptyFields("/executions", query);
  if (clean) redirect(clean);
  const params = parseExecutionListParams(query);
  const access = await authorizePage("tasks:read", executionListHref(params));
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  const db = await consoleDb();
  const [list, tools] = await Promise.all([loadExecutionList(db, params), listKnownToolNames(db)]);
  return <ExecutionListView params={params} list={list} now={new Date()} tools={tools} />;
}
