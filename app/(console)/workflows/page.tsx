import type { Metadata } from "next";
import { authorizePage } from "@/lib/adapters/auth/session";
import { workflowDefinitions } from "@/lib/model/workflows";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { WorkflowCard } from "@/components/workflow/workflow-card";

export const metadata: Metadata = { title: "Workflows" };

export default async function WorkflowsPage() {
  const access = await authorizePage("workflows:read", "/workflows");
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  return (
    <>
      <header className="page-header">
        <h1>Workflows</h1>
        <p className="lede">
          Each workflow is a state machine defined as data. Tasks pin the digest of the definition they were created
          with, so a task keeps its rules when a new version ships.
        </p>
      </header>
      {workflowDefinitions.map((def) => (
        <WorkflowCard key={def.digest} def={def} />
      ))}
    </>
  );
}
