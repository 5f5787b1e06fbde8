import type { Db } from "@/lib/db";
import { issueApiToken } from "@/lib/auth/api-tokens";
import { createTask, transitionTask, type Actor } from "@/lib/engine/tasks";
import type { TaskPatch } from "@/lib/engine/task-state";
import { countUsers, createUser } from "@/lib/users";

/**
 * Demo data for the embedded quick start. Logins and the agent token are
 * public on purpose (they are printed and listed in the README); every demo
 * task is driven through the real engine, so its history is real history.
 * The tasks seeded here show the lifecycle and the delivery workflow only:
 * nothing here claims a side effect (no refund in flight, none done, none
 * reconciled). Those come from real runs of the demo refund agent, which
 * scripts/start.ts makes once the server is up (lib/demo/).
 */
export const demoUsers = [
  { username: "operator", password: "operator-demo", displayName: "Olivia Operator", role: "operator" },
  { username: "operator2", password: "operator2-demo", displayName: "Omar Operator", role: "operator" },
  { username: "auditor", password: "auditor-demo", displayName: "Ada Auditor", role: "auditor" },
  { username: "engineer", password: "engineer-demo", displayName: "Eli Engineer", role: "engineer" },
  { username: "admin", password: "admin-demo", displayName: "Ana Admin", role: "admin" },
] as const;

export const demoAgent = {
  name: "refund-bot",
  identity: "spiffe://verity.local/agent/refund-bot",
  token: "vrt_demo_refund_bot_token_for_local_use_only",
} as const;

/** A read-only agent (auditor role): monitoring, and proof that roles bind tokens too. */
export const demoObserver = {
  name: "observer-bot",
  identity: "spiffe://verity.local/agent/observer-bot",
  token: "vrt_demo_observer_bot_token_read_only",
} as const;

type Step = { to?: string; patch?: TaskPatch; reason?: string };

const refundSubtasks = [
  { id: "lookup-order", title: "Look up the order", mandatory: true },
  { id: "issue-refund", title: "Issue the refund", mandatory: true },
  { id: "notify-customer", title: "Notify the customer", mandatory: false },
];

const done = (...ids: string[]): TaskPatch => ({ subtasks: ids.map((id) => ({ id, status: "COMPLETED" as const })) });

const agentTaskScripts: Array<{ intent: string; steps: Step[]; once?: boolean }> = [
  { intent: "refund-order-1001", steps: [] },
  { intent: "refund-order-1002", steps: [{ to: "PLANNING" }] },
  { intent: "refund-order-1003", steps: [{ to: "PLANNING" }, { to: "READY" }] },
  { intent: "refund-order-1004", steps: [{ to: "PLANNING" }, { to: "READY" }, { to: "RUNNING", patch: { active_agents: [demoAgent.identity] } }] },
  {
    intent: "refund-order-1005",
    steps: [
      { to: "PLANNING" },
      { to: "READY" },
      { to: "RUNNING", patch: { active_agents: [demoAgent.identity], budget: { currency_spent_usd: 0.4, tokens_spent: 1800, hops_used: 2 } } },
      { patch: done("lookup-order") },
    ],
  },
  {
    intent: "refund-order-1007",
    // An escalation before any refund was attempted: no execution, so nothing for the review queue.
    // Once only: the console's waiting tasks should be mostly the demo's frozen refunds.
    once: true,
    steps: [{ to: "PLANNING" }, { to: "READY" }, { to: "RUNNING" }, { to: "WAITING_FOR_HUMAN", reason: "the order total and the requested amount differ; a person checks before any refund" }],
  },
  { intent: "refund-order-1009", steps: [{ to: "PLANNING" }, { to: "CANCELLED", reason: "customer withdrew the request" }] },
  {
    intent: "refund-order-1010",
    steps: [{ to: "PLANNING" }, { to: "READY" }, { to: "RUNNING" }, { to: "FAILED", reason: "order lookup: the order does not exist" }, { to: "PERMANENTLY_FAILED", reason: "order does not exist" }],
  },
];

const deliveryScripts: Array<{ intent: string; steps: Step[] }> = [
  { intent: "feature-export-csv", steps: [] },
  {
    intent: "feature-audit-filter",
    steps: [{ patch: { gates: { plan_approved: true }, artifacts: { implementation_plan: "plans/audit-filter.md" } } }, { to: "implementing" }],
  },
  {
    intent: "fix-timeout-retry",
    steps: [
      { patch: { gates: { plan_approved: true } } },
      { to: "implementing" },
      { patch: { gates: { implementation_complete: true }, artifacts: { code_files: ["lib/retry.ts"] } } },
      { to: "reviewing" },
      { patch: { gates: { review_passed: true } } },
      { to: "testing" },
    ],
  },
  {
    intent: "feature-dark-mode",
    steps: [
      { patch: { gates: { plan_approved: true } } },
      { to: "implementing" },
      { patch: { gates: { implementation_complete: true } } },
      { to: "reviewing" },
      { patch: { gates: { review_passed: true } } },
      { to: "testing" },
      { patch: { gates: { tests_passing: true, security_approved: true, deployment_approved: true }, artifacts: { test_results: "412 passed" } } },
      { to: "complete" },
    ],
  },
  { intent: "spike-vector-search", steps: [{ to: "expired", reason: "time box ran out" }] },
];

export async function isSeeded(db: Db): Promise<boolean> {
  return (await countUsers(db)) > 0;
}

export async function seedDemoData(db: Db, options: { extraTasks?: number } = {}): Promise<{ tasks: number }> {
  for (const user of demoUsers) await createUser(db, user);
  await issueApiToken(db, { name: demoAgent.name, identity: demoAgent.identity, token: demoAgent.token });
  await issueApiToken(db, { name: demoObserver.name, identity: demoObserver.identity, token: demoObserver.token, role: "auditor" });
  const agent: Actor = { identity: demoAgent.identity, kind: "agent" };
  let tasks = 0;
  const run = async (workflow: string, intent: string, steps: Step[]) => {
    const { task } = await createTask(
      db,
      { workflow, intent_id: intent, subtasks: workflow === "agent-task" ? refundSubtasks : undefined, budget: { currency_committed_usd: 5 } },
      agent,
    );
    let version = task.version;
    for (const step of steps) {
      const result = await transitionTask(db, task.id, { expected_version: version, ...step }, agent);
      version = result.task.version;
    }
    tasks++;
  };
  for (const s of agentTaskScripts) await run("agent-task", s.intent, s.steps);
  for (const s of deliveryScripts) await run("delivery", s.intent, s.steps);
  const repeatable = agentTaskScripts.filter((s) => !s.once);
  for (let i = 0; i < (options.extraTasks ?? 0); i++) {
    const s = repeatable[i % repeatable.length]!;
    await run("agent-task", `${s.intent}-${i}`, s.steps);
  }
  return { tasks };
}
