import { defineWorkflow } from "@/lib/model/workflows/workflow-definition";

/**
 * The delivery lifecycle of the durable-state spec (000): each stage is left
 * forward only once its gate is true, and each later stage requires every
 * earlier gate, so no patch can quietly un-approve a plan mid-review.
 */
export const deliveryV1 = defineWorkflow({
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
});
