import type { Execution, Task, TaskPatch } from "@/sdk";

/**
 * The demo coding agent's decisions, pure: from the task and its ledger to
 * the next step, so a first run, a rerun and a resume after SIGKILL are the
 * same loop (as the refund agent's programs/agent/plan.ts). The agent never
 * decides what a person must: it writes the plan and waits for an operator
 * to approve it, and it waits again for an engineer's security approval and
 * an operator's deployment approval before it releases.
 */

/** The registered workflow (programs/seed/registry/software-delivery.workflow.json). */
export const DELIVERY_WORKFLOW = "software-delivery";
/** The registered tool (programs/seed/registry/deploy-release.tool.json). */
export const RELEASE_TOOL = "deploy.release";
/** The one release of a change: its tool_call_id, so a resumed agent asks for the same call. */
export const RELEASE_CALL = "release";
/** deploy.release's compensating tool (programs/seed/registry/deploy-rollback.tool.json). */
export const ROLLBACK_TOOL = "deploy.rollback";

/** The run id of the changes the demo seed leaves for this agent (programs/seed/seed.ts). */
export const DEMO_DELIVERY_RUN = "demo-delivery";

/** A change the agent carries from plan to release. */
export interface Change {
  id: string;
  service: string;
  version: string;
  commit: string;
  environment: "staging" | "production";
  summary: string;
}

export type DeliveryOutcome =
  | "completed"
  /** Waiting for a person: the plan's approval, or security and deployment approval. */
  | "waiting_for_people"
  /** The release's outcome is not known yet: its workers answer the server's lookup. */
  | "reconciling"
  | "failed"
  | "in_flight"
  | "error";

export type DeliveryStep =
  | { kind: "transition"; to?: string; patch?: TaskPatch; reason: string }
  | { kind: "release" }
  /** A person decided the release must not stand: send its compensation, recorded and released to this agent. */
  | { kind: "rollback"; execution: Execution }
  /** A SENT release found on resume: the worker that sent it is gone, so its outcome is unknown. */
  | { kind: "record_unknown"; execution: Execution }
  | { kind: "stop"; outcome: DeliveryOutcome; detail: string };

const succeeded = new Set(["SUCCEEDED", "RECONCILED_SUCCEEDED"]);
const unresolved = new Set(["SENT", "OUTCOME_UNKNOWN", "NEEDS_HUMAN"]);

export function releaseRequestOf(change: Change): Record<string, string> {
  return { service: change.service, version: change.version, environment: change.environment, commit: change.commit };
}

function filled(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 : typeof value === "string" && value.trim().length > 0;
}

export function planDeliveryStep(task: Task, executions: readonly Execution[], change: Change): DeliveryStep {
  const { gates, artifacts } = task.state;
  switch (task.status) {
    case "planning":
      if (!filled(artifacts.implementation_plan))
        return {
          kind: "transition",
          patch: {
            artifacts: { implementation_plan: `Plan for ${change.service} ${change.version}: ${change.summary}` },
          },
          reason: "Implementation plan written",
        };
      if (!gates.plan_approved)
        return { kind: "stop", outcome: "waiting_for_people", detail: "the plan waits for an operator's approval" };
      return { kind: "transition", to: "implementing", reason: "Plan approved: implementing" };
    case "implementing":
      return {
        kind: "transition",
        to: "reviewing",
        patch: {
          artifacts: { code_files: [`services/${change.service}/src/release-${change.version}.ts`] },
          gates: { implementation_complete: true },
        },
        reason: "Implementation complete",
      };
    case "reviewing":
      return {
        kind: "transition",
        to: "testing",
        patch: {
          artifacts: { review_report: `Reviewed ${change.commit}: no findings` },
          gates: { review_passed: true },
        },
        reason: "Review passed",
      };
    case "testing":
      if (!gates.tests_passing || !filled(artifacts.test_results))
        return {
          kind: "transition",
          patch: { artifacts: { test_results: "128 passed, 0 failed" }, gates: { tests_passing: true } },
          reason: "Tests pass",
        };
      if (!gates.security_approved || !gates.deployment_approved) {
        const waiting = [
          gates.security_approved ? null : "an engineer's security approval",
          gates.deployment_approved ? null : "an operator's deployment approval",
        ].filter(Boolean);
        return {
          kind: "stop",
          outcome: "waiting_for_people",
          detail: `the release waits for ${waiting.join(" and ")}`,
        };
      }
      return { kind: "transition", to: "releasing", reason: "Every gate approved: releasing" };
    case "releasing": {
      const release = executions.find((e) => e.tool_call_id === RELEASE_CALL);
      const rollback = release && executions.find((e) => e.compensates_execution_id === release.id);
      if (rollback)
        return callStep(rollback, "rollback", { kind: "rollback", execution: rollback }, "rolled_back", "Rolled back");
      if (!release) return { kind: "release" };
      return callStep(release, "release", { kind: "release" }, "complete", "Released");
    }
    case "complete":
      return { kind: "stop", outcome: "completed", detail: "released" };
    case "rolled_back":
      return { kind: "stop", outcome: "completed", detail: "released, then rolled back on a person's decision" };
    default:
      return { kind: "stop", outcome: "failed", detail: `the task is ${task.status}` };
  }
}

/**
 * One call's next step, the same for the release and for its compensation
 * (recorded by a person's review decision, "accept evidence & compensate",
 * and left for this agent to send under its own key): send it while it is
 * only an intent, move on once it is known to have happened, report a SENT
 * one found on resume as unknown, wait while the server reconciles it.
 */
function callStep(
  call: Execution,
  noun: "release" | "rollback",
  send: DeliveryStep,
  doneTo: string,
  done: string,
): DeliveryStep {
  if (call.status === "INTENT_RECORDED") return send;
  if (succeeded.has(call.status))
    return { kind: "transition", to: doneTo, reason: `${done}: ${call.tool} ${call.status}` };
  if (call.status === "SENT") return { kind: "record_unknown", execution: call };
  if (unresolved.has(call.status))
    return {
      kind: "stop",
      outcome: "reconciling",
      detail: `the ${noun} is ${call.status}: the server asks the tool's workers whether it happened`,
    };
  return { kind: "stop", outcome: "failed", detail: `the ${noun} is ${call.status}: a person decides` };
}
