import type { Metadata } from "next";
import { authorizePage } from "@/lib/adapters/auth/session";
import { getDb } from "@/lib/db/client";
import { toolNames } from "@/lib/model/executions/tools";
import { listWorkflowNames } from "@/lib/stores/workflow-registry";
import { listAgents } from "@/lib/use-cases/agents/list-agents";
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
  const db = getDb();
  const [agents, workflows] = await Promise.all([listAgents(db), listWorkflowNames(db)]);
  return <AgentsView agents={agents} workflows={workflows} tools={toolNames} />;
}
