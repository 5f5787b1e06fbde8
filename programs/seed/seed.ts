import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerTool } from "@/lib/use-cases/tools/register-tool";
import { publishWorkflow } from "@/lib/use-cases/workflows/publish-workflow";
import { changesOf, deliveryTaskIdOf, intentIdOfChange } from "@/programs/agent/delivery/delivery-agent";
import {
  DELIVERY_WORKFLOW,
  DEMO_DELIVERY_RUN,
  RELEASE_TOOL,
  ROLLBACK_TOOL,
  type Change,
} from "@/programs/agent/delivery/plan";
import deployReleaseTool from "@/programs/seed/registry/deploy-release.tool.json" with { type: "json" };
import deployRollbackTool from "@/programs/seed/registry/deploy-rollback.tool.json" with { type: "json" };
import softwareDeliveryWorkflow from "@/programs/seed/registry/software-delivery.workflow.json" with { type: "json" };
import { issueApiToken } from "@/lib/stores/api-tokens";
import { sha256Hex } from "@/lib/core/canonical-json";
import type { DatabaseHandle, Db } from "@/lib/db/client";
import { withAdvisoryLock } from "@/lib/db/sql-session";
import { getTaskVersion } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import type { GateName, TaskPatch } from "@/lib/model/tasks/task-state";
import { userIdentity, type Principal } from "@/lib/model/permissions";
import { approveGate } from "@/lib/use-cases/tasks/approve-gate";
import { createUser } from "@/lib/stores/users";
import { demoAgent, demoObserver, demoUsers } from "@/lib/config/demo-accounts";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";

/**
 * Demo data for the embedded quick start. Logins and the agent token are
 * public on purpose (they are printed and listed in the README); every demo
 * task is driven through the real engine, so its history is real history.
 * The tasks seeded here show the lifecycle and the delivery workflow only:
 * nothing here claims a side effect (no refund in flight, none done, none
 * reconciled). Those come from real runs of the demo refund agent, which
 * scripts/start.ts makes once the server is up (programs/demo/).
 */
/** A transition by the demo agent, or (`approve`) a demo person's approval of a human gate with `reason`. */
type Step = { to?: string; patch?: TaskPatch; reason?: string; approve?: { gate: GateName; by: string } };

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
  {
    intent: "refund-order-1004",
    steps: [{ to: "PLANNING" }, { to: "READY" }, { to: "RUNNING", patch: { active_agents: [demoAgent.identity] } }],
  },
  {
    intent: "refund-order-1005",
    steps: [
      { to: "PLANNING" },
      { to: "READY" },
      {
        to: "RUNNING",
        patch: {
          active_agents: [demoAgent.identity],
          budget: { currency_spent_usd: 0.4, tokens_spent: 1800, hops_used: 2 },
        },
      },
      { patch: done("lookup-order") },
    ],
  },
  {
    intent: "refund-order-1007",
    // An escalation before any refund was attempted: no execution, so nothing for the review queue.
    // Once only: the console's waiting tasks should be mostly the demo's frozen refunds.
    once: true,
    steps: [
      { to: "PLANNING" },
      { to: "READY" },
      { to: "RUNNING" },
      {
        to: "WAITING_FOR_HUMAN",
        reason: "the order total and the requested amount differ; a person checks before any refund",
      },
    ],
  },
  {
    intent: "refund-order-1009",
    steps: [{ to: "PLANNING" }, { to: "CANCELLED", reason: "customer withdrew the request" }],
  },
  {
    intent: "refund-order-1010",
    steps: [
      { to: "PLANNING" },
      { to: "READY" },
      { to: "RUNNING" },
      { to: "FAILED", reason: "order lookup: the order does not exist" },
      { to: "PERMANENTLY_FAILED", reason: "order does not exist" },
    ],
  },
];

const deliveryScripts: Array<{ intent: string; steps: Step[] }> = [
  { intent: "feature-export-csv", steps: [] },
  {
    intent: "feature-audit-filter",
    steps: [
      { patch: { gates: { plan_approved: true }, artifacts: { implementation_plan: "plans/audit-filter.md" } } },
      { to: "implementing" },
    ],
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
      { patch: { gates: { tests_passing: true }, artifacts: { test_results: "412 passed" } } },
      // Human gates: only people with the right role set them (delivery v2's gate rules), four eyes apart.
      { approve: { gate: "security_approved", by: "engineer" }, reason: "no new input surface; CSP unchanged" },
      { approve: { gate: "deployment_approved", by: "operator" }, reason: "deploy window agreed with support" },
      { to: "complete" },
    ],
  },
  { intent: "spike-vector-search", steps: [{ to: "expired", reason: "time box ran out" }] },
];

/**
 * Changes on the registered software-delivery workflow, as the demo coding
 * agent (programs/agent/delivery/) leaves them: one waits for an operator to
 * approve its plan, one for security and deployment approval, and one has
 * every approval and is released by the first start's demo run of the agent
 * (a real deploy at the sandbox's release service, reconciled through the
 * agent's lookup worker). Ids and intents are the agent's own, so
 * `npm run agent -- --scenario delivery --resume --run-id demo` continues them.
 */
const deliveryChanges: Array<{ change: Change; steps: Step[] }> = (() => {
  const [plan, approvals, release] = changesOf(DEMO_DELIVERY_RUN, 3) as [Change, Change, Change];
  const planned = (c: Change): Step => ({
    patch: { artifacts: { implementation_plan: `Plan for ${c.service} ${c.version}: ${c.summary}` } },
    reason: "Implementation plan written",
  });
  const toTesting = (c: Change): Step[] => [
    planned(c),
    { approve: { gate: "plan_approved", by: "operator" }, reason: "scope and rollback plan agreed" },
    { to: "implementing" },
    {
      to: "reviewing",
      patch: {
        artifacts: { code_files: [`services/${c.service}/src/release-${c.version}.ts`] },
        gates: { implementation_complete: true },
      },
    },
    {
      to: "testing",
      patch: { artifacts: { review_report: `Reviewed ${c.commit}: no findings` }, gates: { review_passed: true } },
    },
    { patch: { artifacts: { test_results: "128 passed, 0 failed" }, gates: { tests_passing: true } } },
  ];
  return [
    { change: plan, steps: [planned(plan)] },
    { change: approvals, steps: toTesting(approvals) },
    {
      change: release,
      steps: [
        ...toTesting(release),
        { approve: { gate: "security_approved", by: "engineer" }, reason: "no new input surface" },
        { approve: { gate: "deployment_approved", by: "operator" }, reason: "inside the deploy window" },
      ],
    },
  ];
})();

/** A demo person, as the console's session would present them: who approves the seeded human gates. */
function demoPrincipal(username: string): Principal {
  const user = demoUsers.find((u) => u.username === username);
  if (!user) throw new Error(`seed: no demo user ${username}`);
  return {
    kind: "user",
    id: username,
    identity: userIdentity(username),
    role: user.role,
    displayName: user.displayName,
    tenantId: DEFAULT_TENANT_ID,
  };
}

/**
 * Seeding survives a kill at any point. The seed cannot be one transaction
 * (it goes through createTask / transitionTask, which commit their own), so
 * it is idempotent and resumed until its completion marker is written:
 *
 * - every row has a fixed identity: users by username, tokens by their hash,
 *   tasks by id (`demo-<intent>`), each step by transition id
 *   (`<task>:v<version it makes>`), so a resumed seed skips what committed
 *   and the engine answers a replayed step with its first result;
 * - the last write is the demo agent's token, and that row is the marker
 *   (isSeeded): a database whose demo token works holds every demo row, and
 *   one without it is seeded again, resuming where the killed start stopped,
 *   never skipped because some rows exist.
 *
 * A database seeded by an earlier Verity (random task ids, the tokens written
 * before the tasks) has the marker already and is left as it is.
 */
export async function isSeeded(db: Db): Promise<boolean> {
  return (await seedMarkerOf(db)) !== null;
}

/** The id of the demo agent token's row: set once per seeding, it names this seeded database (programs/demo/runner.ts's marker). */
export async function seedMarkerOf(db: Db): Promise<string | null> {
  const row = await db.apiToken.findUnique({ where: { tokenHash: sha256Hex(demoAgent.token) }, select: { id: true } });
  return row?.id ?? null;
}

export interface SeedOptions {
  extraTasks?: number;
  /** Tests kill the process at these points (tests/startup/): `seed:user:<name>`, `seed:token:observer`, `seed:task:<id>:v<n>`, `seed:done`. */
  faultPoint?: (point: string) => void | Promise<void>;
}

/** Seeds, or completes a seed a killed process left half done; a seeded database is left alone. */
export async function seedDemoData(db: Db, options: SeedOptions = {}): Promise<{ tasks: number; seedId: string }> {
  const fault = options.faultPoint ?? (() => {});
  const existing = await seedMarkerOf(db);
  if (existing) return { tasks: 0, seedId: existing };
  // The demo tasks are created under the registry's versions. A start has
  // registered them already (scripts/start.ts); a seed on its own does it too.
  await registerBuiltInWorkflows(db);
  // The delivery scenario's tool and workflow, registered as a team would
  // (the same use cases as POST /api/v1/tools and /api/v1/workflows);
  // registering the same document again is answered as already registered.
  // The compensating tool first: a tool may name only a registered one.
  await registerTool(db, deployRollbackTool, { identity: seedActor.identity, kind: "system" });
  await registerTool(db, deployReleaseTool, { identity: seedActor.identity, kind: "system" });
  await publishWorkflow(db, softwareDeliveryWorkflow, seedActor);
  for (const user of demoUsers) {
    if (await db.user.findUnique({ where: { username: user.username }, select: { id: true } })) continue;
    await createUser(db, user);
    await fault(`seed:user:${user.username}`);
  }
  if (
    await issueTokenOnce(db, {
      name: demoObserver.name,
      identity: demoObserver.identity,
      token: demoObserver.token,
      role: "auditor",
    })
  )
    await fault("seed:token:observer");
  const agent: Actor = { identity: demoAgent.identity, kind: "agent" };
  let tasks = 0;
  const run = async (workflow: string, intent: string, steps: Step[], taskId = `demo-${intent}`) => {
    // Versions are gapless and every step makes one: step i takes the task from version i + 1.
    let version = await getTaskVersion(db, taskId);
    if (version === null) {
      const input = {
        workflow,
        task_id: taskId,
        intent_id: intent,
        subtasks: workflow === "agent-task" ? refundSubtasks : undefined,
        budget: { currency_committed_usd: 5 },
      };
      version = (await createTask(db, input, agent)).task.version;
      await fault(`seed:task:${taskId}:v${version}`);
    }
    for (const [i, step] of steps.entries()) {
      if (i + 1 < version) continue;
      const { approve, ...transition } = step;
      const result = approve
        ? await approveGate(
            db,
            taskId,
            {
              expected_version: i + 1,
              transition_id: `${taskId}:v${i + 2}`,
              gate: approve.gate,
              reason: step.reason ?? "approved",
            },
            demoPrincipal(approve.by),
          )
        : await transitionTask(
            db,
            taskId,
            { expected_version: i + 1, transition_id: `${taskId}:v${i + 2}`, ...transition },
            agent,
          );
      version = result.task.version;
      await fault(`seed:task:${taskId}:v${version}`);
    }
    tasks++;
  };
  for (const s of agentTaskScripts) await run("agent-task", s.intent, s.steps);
  for (const s of deliveryScripts) await run("delivery", s.intent, s.steps);
  for (const d of deliveryChanges)
    await run(DELIVERY_WORKFLOW, intentIdOfChange(d.change), d.steps, deliveryTaskIdOf(d.change));
  const repeatable = agentTaskScripts.filter((s) => !s.once);
  for (let i = 0; i < (options.extraTasks ?? 0); i++) {
    const s = repeatable[i % repeatable.length]!;
    await run("agent-task", `${s.intent}-${i}`, s.steps);
  }
  // The completion marker, last. Scoped to what the demo agent uses: its workflows and tools, no take-over.
  const { id: seedId } = await issueApiToken(
    db,
    {
      name: demoAgent.name,
      identity: demoAgent.identity,
      token: demoAgent.token,
      scopes: {
        workflows: ["agent-task", "delivery", DELIVERY_WORKFLOW],
        tools: ["payments.refund", "crm.add_note", RELEASE_TOOL, ROLLBACK_TOOL],
        take_over_leases: false,
      },
    },
    seedActor,
  );
  await fault("seed:done");
  return { tasks, seedId };
}

/** Issues the token unless its row exists; whether it wrote one. */
async function issueTokenOnce(
  db: Db,
  input: Parameters<typeof issueApiToken>[1] & { token: string },
): Promise<boolean> {
  if (await db.apiToken.findUnique({ where: { tokenHash: sha256Hex(input.token) }, select: { id: true } }))
    return false;
  await issueApiToken(db, input, seedActor);
  return true;
}

/** Who the seed's token issues are recorded as in the audit log. */
const seedActor: AuditActor = { identity: "system:seed", kind: "system" };

/** Prisma's lock id is 72707369 (lib/db/migrate.ts); this one is the seed's: "veri". */
export const SEED_LOCK_KEY = 0x76657269;

/**
 * seedDemoData under an advisory lock, so that two processes starting on one
 * PostgreSQL database do not seed it at once (the second finds the marker
 * and leaves it alone). `seededNow` is false when it was seeded already.
 */
export async function ensureDemoData(
  handle: DatabaseHandle,
  options: SeedOptions = {},
): Promise<{ seededNow: boolean; tasks: number; seedId: string }> {
  return withAdvisoryLock(handle.adapterFactory, SEED_LOCK_KEY, async () => {
    const existing = await seedMarkerOf(handle.db);
    if (existing) return { seededNow: false, tasks: 0, seedId: existing };
    return { seededNow: true, ...(await seedDemoData(handle.db, options)) };
  });
}
