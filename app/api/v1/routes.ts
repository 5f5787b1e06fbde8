import type { ApiRoute } from "@/lib/adapters/http/api-router";
import * as unmatchedRoute from "@/app/api/v1/[...path]/route";
import * as alertsRoute from "@/app/api/v1/alerts/route";
import * as alertsIdRoute from "@/app/api/v1/alerts/[id]/route";
import * as alertsIdAcknowledgeRoute from "@/app/api/v1/alerts/[id]/acknowledge/route";
import * as alertsIdEscalateRoute from "@/app/api/v1/alerts/[id]/escalate/route";
import * as alertsIdReconcileRoute from "@/app/api/v1/alerts/[id]/reconcile/route";
import * as alertsIdResolveRoute from "@/app/api/v1/alerts/[id]/resolve/route";
import * as auditEntriesRoute from "@/app/api/v1/audit/entries/route";
import * as auditEntriesIdAnnotationsRoute from "@/app/api/v1/audit/entries/[id]/annotations/route";
import * as auditExportRoute from "@/app/api/v1/audit/export/route";
import * as auditSearchRoute from "@/app/api/v1/audit/search/route";
import * as auditVerifyRoute from "@/app/api/v1/audit/verify/route";
import * as checkpointsIdRoute from "@/app/api/v1/checkpoints/[id]/route";
import * as checkpointsIdRestoreRoute from "@/app/api/v1/checkpoints/[id]/restore/route";
import * as checkpointsIdRestorePlanRoute from "@/app/api/v1/checkpoints/[id]/restore-plan/route";
import * as eventsRoute from "@/app/api/v1/events/route";
import * as eventsSandboxRoute from "@/app/api/v1/events/sandbox/route";
import * as eventsStripeRoute from "@/app/api/v1/events/stripe/route";
import * as executionsIdRoute from "@/app/api/v1/executions/[id]/route";
import * as executionsIdOutcomeRoute from "@/app/api/v1/executions/[id]/outcome/route";
import * as executionsIdSentRoute from "@/app/api/v1/executions/[id]/sent/route";
import * as graphCheckpointsRoute from "@/app/api/v1/graph/checkpoints/route";
import * as graphThreadsRoute from "@/app/api/v1/graph/threads/route";
import * as graphWritesRoute from "@/app/api/v1/graph/writes/route";
import * as lookupsIdAnswerRoute from "@/app/api/v1/lookups/[id]/answer/route";
import * as monitorRunsRoute from "@/app/api/v1/monitor/runs/route";
import * as openapiJsonRoute from "@/app/api/v1/openapi.json/route";
import * as retentionPoliciesRoute from "@/app/api/v1/retention/policies/route";
import * as retentionPoliciesClassRoute from "@/app/api/v1/retention/policies/[class]/route";
import * as tasksRoute from "@/app/api/v1/tasks/route";
import * as tasksIdRoute from "@/app/api/v1/tasks/[id]/route";
import * as tasksIdCheckpointsRoute from "@/app/api/v1/tasks/[id]/checkpoints/route";
import * as tasksIdCheckpointsRestoresRoute from "@/app/api/v1/tasks/[id]/checkpoints/restores/route";
import * as tasksIdDelegationsRoute from "@/app/api/v1/tasks/[id]/delegations/route";
import * as tasksIdDelegationsDelegationIdRoute from "@/app/api/v1/tasks/[id]/delegations/[delegationId]/route";
import * as tasksIdExecutionsRoute from "@/app/api/v1/tasks/[id]/executions/route";
import * as tasksIdInstructionsRoute from "@/app/api/v1/tasks/[id]/instructions/route";
import * as tasksIdLeaseRoute from "@/app/api/v1/tasks/[id]/lease/route";
import * as tasksIdLeaseReleaseRoute from "@/app/api/v1/tasks/[id]/lease/release/route";
import * as tasksIdLeaseRenewRoute from "@/app/api/v1/tasks/[id]/lease/renew/route";
import * as tasksIdNextRoute from "@/app/api/v1/tasks/[id]/next/route";
import * as tasksIdToolCallsRoute from "@/app/api/v1/tasks/[id]/tool-calls/route";
import * as tasksIdTransitionsRoute from "@/app/api/v1/tasks/[id]/transitions/route";
import * as toolsRoute from "@/app/api/v1/tools/route";
import * as toolsNameRoute from "@/app/api/v1/tools/[name]/route";
import * as toolsNameLookupsClaimRoute from "@/app/api/v1/tools/[name]/lookups/claim/route";
import * as toolsNameRetireRoute from "@/app/api/v1/tools/[name]/retire/route";
import * as workflowsRoute from "@/app/api/v1/workflows/route";
import * as workflowsNameRoute from "@/app/api/v1/workflows/[name]/route";
import * as workflowsNameVersionsVersionRoute from "@/app/api/v1/workflows/[name]/versions/[version]/route";
import * as workflowsMigrationsRoute from "@/app/api/v1/workflows/migrations/route";
import * as workflowsMigrationsPlanRoute from "@/app/api/v1/workflows/migrations/plan/route";

/**
 * Every route under /api/v1, for the server's own router
 * (lib/adapters/http/api-router.ts), which serves agents' requests without
 * Next.js's pipeline. The folders below stay the routes' definition and Next
 * still serves them (to the console's session, to webhooks, under `next
 * dev`); app/api/v1/routes.test.ts fails when a route.ts is missing here.
 */
export const apiRoutes: readonly ApiRoute[] = [
  { template: "/api/v1/[...path]", module: unmatchedRoute },
  { template: "/api/v1/alerts", module: alertsRoute },
  { template: "/api/v1/alerts/[id]", module: alertsIdRoute },
  { template: "/api/v1/alerts/[id]/acknowledge", module: alertsIdAcknowledgeRoute },
  { template: "/api/v1/alerts/[id]/escalate", module: alertsIdEscalateRoute },
  { template: "/api/v1/alerts/[id]/reconcile", module: alertsIdReconcileRoute },
  { template: "/api/v1/alerts/[id]/resolve", module: alertsIdResolveRoute },
  { template: "/api/v1/audit/entries", module: auditEntriesRoute },
  { template: "/api/v1/audit/entries/[id]/annotations", module: auditEntriesIdAnnotationsRoute },
  { template: "/api/v1/audit/export", module: auditExportRoute },
  { template: "/api/v1/audit/search", module: auditSearchRoute },
  { template: "/api/v1/audit/verify", module: auditVerifyRoute },
  { template: "/api/v1/checkpoints/[id]", module: checkpointsIdRoute },
  { template: "/api/v1/checkpoints/[id]/restore", module: checkpointsIdRestoreRoute },
  { template: "/api/v1/checkpoints/[id]/restore-plan", module: checkpointsIdRestorePlanRoute },
  { template: "/api/v1/events", module: eventsRoute },
  { template: "/api/v1/events/sandbox", module: eventsSandboxRoute },
  { template: "/api/v1/events/stripe", module: eventsStripeRoute },
  { template: "/api/v1/executions/[id]", module: executionsIdRoute },
  { template: "/api/v1/executions/[id]/outcome", module: executionsIdOutcomeRoute },
  { template: "/api/v1/executions/[id]/sent", module: executionsIdSentRoute },
  { template: "/api/v1/graph/checkpoints", module: graphCheckpointsRoute },
  { template: "/api/v1/graph/threads", module: graphThreadsRoute },
  { template: "/api/v1/graph/writes", module: graphWritesRoute },
  { template: "/api/v1/lookups/[id]/answer", module: lookupsIdAnswerRoute },
  { template: "/api/v1/monitor/runs", module: monitorRunsRoute },
  { template: "/api/v1/openapi.json", module: openapiJsonRoute },
  { template: "/api/v1/retention/policies", module: retentionPoliciesRoute },
  { template: "/api/v1/retention/policies/[class]", module: retentionPoliciesClassRoute },
  { template: "/api/v1/tasks", module: tasksRoute },
  { template: "/api/v1/tasks/[id]", module: tasksIdRoute },
  { template: "/api/v1/tasks/[id]/checkpoints", module: tasksIdCheckpointsRoute },
  { template: "/api/v1/tasks/[id]/checkpoints/restores", module: tasksIdCheckpointsRestoresRoute },
  { template: "/api/v1/tasks/[id]/delegations", module: tasksIdDelegationsRoute },
  { template: "/api/v1/tasks/[id]/delegations/[delegationId]", module: tasksIdDelegationsDelegationIdRoute },
  { template: "/api/v1/tasks/[id]/executions", module: tasksIdExecutionsRoute },
  { template: "/api/v1/tasks/[id]/instructions", module: tasksIdInstructionsRoute },
  { template: "/api/v1/tasks/[id]/lease", module: tasksIdLeaseRoute },
  { template: "/api/v1/tasks/[id]/lease/release", module: tasksIdLeaseReleaseRoute },
  { template: "/api/v1/tasks/[id]/lease/renew", module: tasksIdLeaseRenewRoute },
  { template: "/api/v1/tasks/[id]/next", module: tasksIdNextRoute },
  { template: "/api/v1/tasks/[id]/tool-calls", module: tasksIdToolCallsRoute },
  { template: "/api/v1/tasks/[id]/transitions", module: tasksIdTransitionsRoute },
  { template: "/api/v1/tools", module: toolsRoute },
  { template: "/api/v1/tools/[name]", module: toolsNameRoute },
  { template: "/api/v1/tools/[name]/lookups/claim", module: toolsNameLookupsClaimRoute },
  { template: "/api/v1/tools/[name]/retire", module: toolsNameRetireRoute },
  { template: "/api/v1/workflows", module: workflowsRoute },
  { template: "/api/v1/workflows/[name]", module: workflowsNameRoute },
  { template: "/api/v1/workflows/[name]/versions/[version]", module: workflowsNameVersionsVersionRoute },
  { template: "/api/v1/workflows/migrations", module: workflowsMigrationsRoute },
  { template: "/api/v1/workflows/migrations/plan", module: workflowsMigrationsPlanRoute },
];
