import { defineWorkflow, type WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";

/**
 * The agent lifecycle of the state consistency audit (spec 004): the happy
 * path, the failure/recovery loop, human escalation, and the invalid edges it
 * names, each with the invariant it violates.
 */
const agentTaskV1Data: WorkflowDefinitionData = {
  name: "agent-task",
  version: 1,
  title: "Agent task",
  description: "An agent's unit of work: plan, run, call tools, validate, with recovery and human escalation.",
  initial: "RECEIVED",
  states: {
    RECEIVED: { description: "Accepted, not yet planned." },
    PLANNING: { description: "The agent is planning the work." },
    READY: { description: "Planned and waiting for a worker." },
    RUNNING: { description: "A worker is executing the plan." },
    WAITING_FOR_TOOL: { description: "An external tool call is in flight." },
    VALIDATING: { description: "The result is being checked before completion." },
    WAITING_FOR_HUMAN: { description: "Escalated: a person must decide." },
    HUMAN_RESOLVED: { description: "A person decided; execution may continue or complete." },
    FAILED: { description: "Execution failed; recovery has not started." },
    RECOVERING: { description: "Recovery is restoring a safe point." },
    RECONCILING: { description: "Internal state is being reconciled with external systems." },
    COMPLETED: { description: "Done, validated.", terminal: true, success: true },
    CANCELLED: { description: "Stopped on purpose.", terminal: true },
    PERMANENTLY_FAILED: { description: "Given up after failure.", terminal: true },
  },
  transitions: [
    { from: "RECEIVED", to: "PLANNING", by: ["agent"], description: "Start planning" },
    { from: "PLANNING", to: "READY", by: ["agent"], description: "Plan ready" },
    { from: "READY", to: "RUNNING", by: ["agent"], description: "Start execution" },
    { from: "RUNNING", to: "WAITING_FOR_TOOL", by: ["agent"], description: "Call an external tool" },
    { from: "WAITING_FOR_TOOL", to: "VALIDATING", by: ["agent"], description: "Tool result received; validate it" },
    { from: "WAITING_FOR_TOOL", to: "RUNNING", by: ["agent"], description: "Tool result recorded; continue" },
    { from: "WAITING_FOR_TOOL", to: "FAILED", by: ["agent"], description: "Tool reported a known failure" },
    {
      from: "VALIDATING",
      to: "COMPLETED",
      by: ["agent"],
      guards: [{ kind: "mandatory_subtasks_completed" }],
      description: "Validated: complete",
    },
    { from: "VALIDATING", to: "RUNNING", by: ["agent"], description: "Validation asks for more work" },
    { from: "VALIDATING", to: "FAILED", by: ["agent"], description: "Validation failed" },
    { from: "RUNNING", to: "FAILED", by: ["agent"], description: "Execution failed" },
    { from: "FAILED", to: "RECOVERING", by: ["agent", "system"], description: "Begin recovery" },
    { from: "RECOVERING", to: "RECONCILING", by: ["agent", "system"], description: "Reconcile with external systems" },
    { from: "RECONCILING", to: "RUNNING", by: ["agent", "system"], description: "Reconciled: resume" },
    { from: "RECONCILING", to: "WAITING_FOR_HUMAN", by: ["agent", "system"], description: "Still ambiguous: escalate" },
    { from: "RUNNING", to: "WAITING_FOR_HUMAN", by: ["agent"], description: "Escalate to a person" },
    { from: "WAITING_FOR_HUMAN", to: "HUMAN_RESOLVED", by: ["user"], description: "Resolve the escalation" },
    { from: "HUMAN_RESOLVED", to: "RUNNING", by: ["agent", "user"], description: "Resume execution" },
    {
      from: "HUMAN_RESOLVED",
      to: "COMPLETED",
      by: ["agent", "user"],
      guards: [{ kind: "mandatory_subtasks_completed" }],
      description: "Complete on a person's decision",
    },
    { from: "FAILED", to: "PERMANENTLY_FAILED", by: ["agent", "user", "system"], description: "Give up" },
    {
      from: "RECOVERING",
      to: "PERMANENTLY_FAILED",
      by: ["agent", "user", "system"],
      description: "Recovery impossible: give up",
    },
  ],
  fromAnyNonTerminal: [{ to: "CANCELLED", by: ["agent", "user"], description: "Cancel" }],
  rejections: [
    {
      from: "WAITING_FOR_TOOL",
      to: "COMPLETED",
      invariant: "completion_requires_validation",
      message: "Required external execution has not been validated: go through VALIDATING.",
    },
    {
      from: "RUNNING",
      to: "COMPLETED",
      invariant: "completion_requires_validation",
      message: "Completion requires validation: go through VALIDATING.",
    },
    {
      from: "FAILED",
      to: "COMPLETED",
      invariant: "failure_requires_recovery",
      message:
        "A failure must have a successful recovery or validated alternative completion before the task completes.",
    },
  ],
};
export const agentTaskV1 = defineWorkflow(agentTaskV1Data);

/**
 * Version 2 adds the side-effect paths of the execution ledger: a tool call
 * whose outcome is unknown goes to RECONCILING (never to FAILED, which would
 * invite a blind retry), and reconciliation or a person's decision leads back
 * to validation. Tasks created under v1 keep v1.
 */
export const agentTaskV2 = defineWorkflow({
  ...agentTaskV1Data,
  version: 2,
  transitions: [
    // The review queue's decisions are applied by Verity itself (actor kind system).
    ...agentTaskV1Data.transitions.map((t) =>
      (t.from === "WAITING_FOR_HUMAN" && t.to === "HUMAN_RESOLVED") ||
      (t.from === "HUMAN_RESOLVED" && t.to === "RUNNING")
        ? { ...t, by: [...t.by, "system" as const] }
        : t,
    ),
    {
      from: "WAITING_FOR_TOOL",
      to: "RECONCILING",
      by: ["agent", "system"],
      description: "Outcome unknown: reconcile with the external system",
    },
    {
      from: "RECONCILING",
      to: "VALIDATING",
      by: ["agent", "system"],
      description: "Reconciled: the effect happened; validate",
    },
    {
      from: "HUMAN_RESOLVED",
      to: "VALIDATING",
      by: ["agent", "user", "system"],
      description: "A person accepted the external evidence; validate",
    },
  ],
  fromAnyNonTerminal: [{ to: "CANCELLED", by: ["agent", "user", "system"], description: "Cancel" }],
});
