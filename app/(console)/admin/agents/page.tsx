import type { Metadata } from "next";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { listWorkflowNames } from "@/lib/stores/workflow-registry";
import { listAgents } from "@/lib/use-cases/agents/list-agents";
import { listKnownToolNames } from "@/lib/use-cases/tools/get-tool";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { AgentsView } from "@/components/agents/agents-view";

export const metadata: Metadata = { title: "Agents" };

export default async function AgentsPage() {
  const access = await authorizePage("agents:manage", "/admin/agents");
  if (!access.ok)
    return (
      <ForbiddenNotice
        reason={`${access.reason} Only administrators create agents and revoke or rotate their tokens.`}
      />
    );
  const db = await consoleDb();
  const [agents, workflows, tools] = await Promise.all([listAgents(db), listWorkflowNames(db), listKnownToolNames(db)]);
  return <AgentsView agents={agents} workflows={workflows} tools={tools} />;
}
