import { defineWorkflow, type WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";

/**
 * The delivery lifecycle of the durable-state spec (000): each stage is left
 * forward only once its gate is true, and each later stage requires every
 * earlier gate, so no patch can quietly un-approve a plan mid-review.
 */
const deliveryV1Data: WorkflowDefinitionData = {
  name: "delivery",
  version: 1,
  title: "Delivery",
  description: "Plan, implement, review, test and ship a change behind six gates.",
  initial: "planning",
  states: {
    planning: { description: "Writing the implementation plan." },
    implementing: { description: "Implementing the approved plan.", requiresGates: ["plan_approved"] },
    reviewing: { description: "Code review.", requiresGates: ["plan_approved", "implementation_complete"] },
    testing: {
      description: "Tests and security review.",
      requiresGates: ["plan_approved", "implementation_complete", "review_passed"],
    },
    complete: {
      description: "Shipped.",
      terminal: true,
      success: true,
      requiresGates: [
        "plan_approved",
        "implementation_complete",
        "review_passed",
        "tests_passing",
        "security_approved",
        "deployment_approved",
      ],
    },
    failed: { description: "Failed.", terminal: true },
    cancelled: { description: "Cancelled.", terminal: true },
    expired: { description: "Ran out of time.", terminal: true },
  },
  transitions: [
    {
      from: "planning",
      to: "implementing",
      by: ["agent"],
      guards: [{ kind: "gates_true", gates: ["plan_approved"] }],
      description: "Plan approved: implement",
    },
    {
      from: "implementing",
      to: "reviewing",
      by: ["agent"],
      guards: [{ kind: "gates_true", gates: ["implementation_complete"] }],
      description: "Implementation complete: review",
    },
    {
      from: "reviewing",
      to: "testing",
      by: ["agent"],
      guards: [{ kind: "gates_true", gates: ["review_passed"] }],
      description: "Review passed: test",
    },
    { from: "reviewing", to: "implementing", by: ["agent"], description: "Changes requested" },
    { from: "testing", to: "implementing", by: ["agent"], description: "Tests failed: fix" },
    {
      from: "testing",
      to: "complete",
      by: ["agent"],
      guards: [{ kind: "gates_true", gates: ["tests_passing", "security_approved", "deployment_approved"] }],
      description: "Tests, security and deployment approved: ship",
    },
  ],
  fromAnyNonTerminal: [
    { to: "failed", by: ["agent", "system"], description: "Fail" },
    { to: "cancelled", by: ["agent", "user"], description: "Cancel" },
    { to: "expired", by: ["system", "agent"], description: "Expire" },
  ],
  rejections: [],
};
export const deliveryV1 = defineWorkflow(deliveryV1Data);

/**
 * Version 2 says who sets the human gates: security approval is an
 * engineer's (or an admin's), deployment approval an operator's (or an
 * admin's), each through the console's approval form, and the person who
 * approved security may not also approve the deployment (four eyes). Under
 * v1 an agent token set all three itself and shipped. Tasks created under v1
 * keep v1's edges, and these gate rules apply to them too (gateRulesOf in
 * ./index.ts): who may approve is policy about people, not the task's path.
 */
export const deliveryV2 = defineWorkflow({
  ...deliveryV1Data,
  version: 2,
  gates: {
    security_approved: {
      roles: ["engineer", "admin"],
      description: "An engineer approves the change's security review.",
    },
    deployment_approved: {
      roles: ["operator", "admin"],
      notSetBySameAs: ["security_approved"],
      description: "An operator approves the deployment; not the person who approved security.",
    },
  },
});
