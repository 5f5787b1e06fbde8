import { beforeAll, describe, expect, it } from "vitest";
import type { AgentScopes } from "@/lib/model/agent-scopes";
import { issueApiToken } from "@/lib/stores/api-tokens";
import type { DatabaseHandle } from "@/lib/db/client";
import * as tasksRoute from "@/app/api/v1/tasks/route";
import * as taskRoute from "@/app/api/v1/tasks/[id]/route";
import * as transitionsRoute from "@/app/api/v1/tasks/[id]/transitions/route";
import * as leaseRoute from "@/app/api/v1/tasks/[id]/lease/route";
import * as renewRoute from "@/app/api/v1/tasks/[id]/lease/renew/route";
import * as releaseRoute from "@/app/api/v1/tasks/[id]/lease/release/route";
import * as taskExecutionsRoute from "@/app/api/v1/tasks/[id]/executions/route";
import * as toolCallsRoute from "@/app/api/v1/tasks/[id]/tool-calls/route";
import * as instructionsRoute from "@/app/api/v1/tasks/[id]/instructions/route";
import * as checkpointsRoute from "@/app/api/v1/tasks/[id]/checkpoints/route";
import * as delegationsRoute from "@/app/api/v1/tasks/[id]/delegations/route";
import * as delegationRoute from "@/app/api/v1/tasks/[id]/delegations/[delegationId]/route";
import * as executionRoute from "@/app/api/v1/executions/[id]/route";
import * as sentRoute from "@/app/api/v1/executions/[id]/sent/route";
import * as outcomeRoute from "@/app/api/v1/executions/[id]/outcome/route";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { callRoute as call } from "@/tests/helpers/route-call";

/**
 * Issue 11, "any agent token reaches every task", through the real route
 * handlers (real Request objects, a real PGlite behind getDb()): a second
 * agent identity may not read another agent's execution, record its
 * outcome, take or stretch its lease, or cancel its task; and the scope
 * matrix of owner, stranger, delegate, read-only and narrowly scoped tokens.
 */
const db = useTestDatabase();

beforeAll(() => {
  // The routes reach the database through lib/db/client.ts's process-wide handle: point it at this file's PGlite.
  (globalThis as unknown as { verityDb?: DatabaseHandle }).verityDb = {
    db,
    forTenant: () => db,
    platformDb: db,
    adapterFactory: undefined as never,
    listenForChanges: undefined as never,
    close: async () => {},
  };
});

const everything: AgentScopes = { workflows: "*", tools: "*", take_over_leases: false };
const tokens = {} as Record<"a" | "b" | "delegate" | "observer" | "deliveryOnly" | "notesOnly" | "supervisor", string>;

beforeAll(async () => {
  const system = { identity: "system:test", kind: "system" } as const;
  const agent = async (name: string, scopes: AgentScopes, role: "agent" | "auditor" = "agent") =>
    (await issueApiToken(db, { name, identity: `spiffe://verity.local/agent/${name}`, role, scopes }, system)).token;
  tokens.a = await agent("agent-a", everything);
  tokens.b = await agent("agent-b", everything);
  tokens.delegate = await agent("agent-c", everything);
  tokens.observer = await agent("observer", everything, "auditor");
  tokens.deliveryOnly = await agent("delivery-bot", { ...everything, workflows: ["delivery"] });
  tokens.notesOnly = await agent("notes-bot", { ...everything, tools: ["crm.add_note"] });
  tokens.supervisor = await agent("supervisor", { ...everything, take_over_leases: true });
});

let seq = 0;
/** A task of agent A's in RUNNING, through the API as A. */
async function runningTaskOfA(): Promise<{ id: string; version: number }> {
  const created = await call(tasksRoute.POST, "POST", "/api/v1/tasks", {
    token: tokens.a,
    body: { workflow: "agent-task", intent_id: `intent-${++seq}` },
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  let version = created.body.version as number;
  for (const to of ["PLANNING", "READY", "RUNNING"]) {
    const moved = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${id}/transitions`, {
      token: tokens.a,
      params: { id },
      body: { to, expected_version: version },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    version = (moved.body.task as { version: number }).version;
  }
  return { id, version };
}

const note = { customer_id: "cus_1", text: "called back" };

/** A SENT crm.add_note execution of agent A's, under A's lease. */
async function sentExecutionOfA() {
  const task = await runningTaskOfA();
  const lease = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease`, {
    token: tokens.a,
    params: { id: task.id },
    body: { ttl_seconds: 60 },
  });
  expect(lease.status).toBe(200);
  const fencing = lease.body.fencing_token as string;
  const intent = await call(taskExecutionsRoute.POST, "POST", `/api/v1/tasks/${task.id}/executions`, {
    token: tokens.a,
    params: { id: task.id },
    body: { tool_call_id: "note-1", tool: "crm.add_note", request: note, expected_version: task.version },
    headers: { "Fencing-Token": fencing },
  });
  expect(intent.status, JSON.stringify(intent.body)).toBe(201);
  const execution = intent.body.execution as { id: string; attempt_id: string };
  const sent = await call(sentRoute.POST, "POST", `/api/v1/executions/${execution.id}/sent`, {
    token: tokens.a,
    params: { id: execution.id },
    body: { attempt_id: execution.attempt_id, fencing_token: fencing },
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return { task, execution, fencing };
}

describe("a second agent identity cannot reach another agent's task (issue 11 reproduction)", () => {
  it("reading its execution, recording its outcome, taking and renewing its lease, cancelling it: each refused", async () => {
    const { task, execution, fencing } = await sentExecutionOfA();

    const read = await call(executionRoute.GET, "GET", `/api/v1/executions/${execution.id}`, {
      token: tokens.b,
      params: { id: execution.id },
    });
    expect(read.status).toBe(404);
    expect(read.body.detail).toBe(`Execution ${execution.id} does not exist.`);

    const outcome = await call(outcomeRoute.POST, "POST", `/api/v1/executions/${execution.id}/outcome`, {
      token: tokens.b,
      params: { id: execution.id },
      body: { attempt_id: execution.attempt_id, outcome: "failed", error: "says who" },
    });
    expect(outcome.status).toBe(404);

    // A releases its lease: the task is free, and still not B's to take.
    expect(
      (
        await call(releaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease/release`, {
          token: tokens.a,
          params: { id: task.id },
          body: { fencing_token: fencing },
        })
      ).status,
    ).toBe(204);
    const take = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease`, {
      token: tokens.b,
      params: { id: task.id },
      body: { ttl_seconds: 3600 },
    });
    expect(take.status).toBe(404);
    const renew = await call(renewRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease/renew`, {
      token: tokens.b,
      params: { id: task.id },
      body: { fencing_token: fencing, ttl_seconds: 3600 },
    });
    expect(renew.status).toBe(404);

    const current = await call(taskRoute.GET, "GET", `/api/v1/tasks/${task.id}`, {
      token: tokens.a,
      params: { id: task.id },
    });
    const cancel = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${task.id}/transitions`, {
      token: tokens.b,
      params: { id: task.id },
      body: { to: "CANCELLED", expected_version: current.body.version },
    });
    expect(cancel.status).toBe(404);
    expect(cancel.body.detail).toBe(`Task ${task.id} does not exist.`);
    // A stale version is no way around it: the reach is checked on the transition's own read, before the
    // version is compared, so B learns neither the task's version nor its status, and no conflict is recorded.
    const stale = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${task.id}/transitions`, {
      token: tokens.b,
      params: { id: task.id },
      body: { to: "CANCELLED", expected_version: 1 },
    });
    expect([stale.status, stale.body.detail]).toEqual([404, `Task ${task.id} does not exist.`]);
    expect(await db.writeConflict.count({ where: { taskId: task.id } })).toBe(0);

    // Nothing changed: the execution is still SENT, the task where A left it.
    const after = await db.execution.findUniqueOrThrow({ where: { id: execution.id } });
    expect(after.status).toBe("SENT");
    const row = await db.task.findFirstOrThrow({ where: { id: task.id } });
    expect([row.status, row.version]).toEqual(["WAITING_FOR_TOOL", current.body.version]);
  });

  it("the owner itself may not take a lease past the cap, nor renew past it: 400 naming ttl_seconds", async () => {
    const task = await runningTaskOfA();
    const long = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease`, {
      token: tokens.a,
      params: { id: task.id },
      body: { ttl_seconds: 3600 },
    });
    expect(long.status).toBe(400);
    expect((long.body.errors as Array<{ field: string }>).map((e) => e.field)).toEqual(["ttl_seconds"]);
    const ok = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease`, {
      token: tokens.a,
      params: { id: task.id },
      body: { ttl_seconds: 300 },
    });
    expect(ok.status).toBe(200);
    const renew = await call(renewRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease/renew`, {
      token: tokens.a,
      params: { id: task.id },
      body: { fencing_token: ok.body.fencing_token, ttl_seconds: 301 },
    });
    expect(renew.status).toBe(400);
  });
});

describe("scope matrix over the API", () => {
  /** Status of each route for one token on one of A's tasks (reads only, and writes that change nothing on refusal). */
  async function reach(token: string, task: { id: string }, executionId: string) {
    const params = { id: task.id };
    return {
      task: (await call(taskRoute.GET, "GET", `/api/v1/tasks/${task.id}`, { token, params })).status,
      transitions: (await call(transitionsRoute.GET, "GET", `/api/v1/tasks/${task.id}/transitions`, { token, params }))
        .status,
      lease: (await call(leaseRoute.GET, "GET", `/api/v1/tasks/${task.id}/lease`, { token, params })).status,
      executions: (await call(taskExecutionsRoute.GET, "GET", `/api/v1/tasks/${task.id}/executions`, { token, params }))
        .status,
      execution: (
        await call(executionRoute.GET, "GET", `/api/v1/executions/${executionId}`, {
          token,
          params: { id: executionId },
        })
      ).status,
      instructions: (
        await call(instructionsRoute.GET, "GET", `/api/v1/tasks/${task.id}/instructions`, { token, params })
      ).status,
      checkpoints: (await call(checkpointsRoute.GET, "GET", `/api/v1/tasks/${task.id}/checkpoints`, { token, params }))
        .status,
    };
  }
  const all = (status: number) => ({
    task: status,
    transitions: status,
    lease: status,
    executions: status,
    execution: status,
    instructions: status,
    checkpoints: status,
  });

  it("owner, read-only token: every read; another agent: 404 everywhere; a delegate: every read once delegated", async () => {
    const { task, execution } = await sentExecutionOfA();
    expect(await reach(tokens.a, task, execution.id)).toEqual(all(200));
    expect(await reach(tokens.observer, task, execution.id)).toEqual(all(200));
    expect(await reach(tokens.b, task, execution.id)).toEqual(all(404));
    expect(await reach(tokens.delegate, task, execution.id)).toEqual(all(404));

    // Only the owner delegates.
    const byStranger = await call(delegationsRoute.POST, "POST", `/api/v1/tasks/${task.id}/delegations`, {
      token: tokens.b,
      params: { id: task.id },
      body: { identity: "spiffe://verity.local/agent/agent-b" },
    });
    expect(byStranger.status).toBe(404);
    const delegated = await call(delegationsRoute.POST, "POST", `/api/v1/tasks/${task.id}/delegations`, {
      token: tokens.a,
      params: { id: task.id },
      body: { identity: "spiffe://verity.local/agent/agent-c" },
    });
    expect(delegated.status).toBe(201);
    expect(await reach(tokens.delegate, task, execution.id)).toEqual(all(200));
    expect(await reach(tokens.b, task, execution.id)).toEqual(all(404));

    // A delegate cannot pass the task on, and cannot declare what A's call did.
    const passOn = await call(delegationsRoute.POST, "POST", `/api/v1/tasks/${task.id}/delegations`, {
      token: tokens.delegate,
      params: { id: task.id },
      body: { identity: "spiffe://verity.local/agent/agent-b" },
    });
    expect(passOn.status).toBe(403);
    const outcome = await call(outcomeRoute.POST, "POST", `/api/v1/executions/${execution.id}/outcome`, {
      token: tokens.delegate,
      params: { id: execution.id },
      body: { attempt_id: execution.attempt_id, outcome: "failed" },
    });
    expect(outcome.status).toBe(403);
    expect(outcome.body.detail).toContain("Only the agent that recorded this intent");

    // Task lists: A sees it, the delegate sees it, B does not; the audit log has the delegation.
    const listed = async (token: string) =>
      ((await call(tasksRoute.GET, "GET", "/api/v1/tasks?limit=200", { token })).body.items as Array<{ id: string }>)
        .map((t) => t.id)
        .includes(task.id);
    expect([await listed(tokens.a), await listed(tokens.delegate), await listed(tokens.b)]).toEqual([
      true,
      true,
      false,
    ]);
    expect(await listed(tokens.observer)).toBe(true);

    const undelegated = await call(
      delegationRoute.DELETE,
      "DELETE",
      `/api/v1/tasks/${task.id}/delegations/${(delegated.body as { id: string }).id}`,
      { token: tokens.a, params: { id: task.id, delegationId: (delegated.body as { id: string }).id } },
    );
    expect(undelegated.status).toBe(200);
    expect(await reach(tokens.delegate, task, execution.id)).toEqual(all(404));
    const audit = await db.auditEntry.findMany({ where: { taskId: task.id, action: { startsWith: "task.deleg" } } });
    expect(audit.map((e) => e.action).sort()).toEqual(["task.delegated"]);
    expect(await db.auditEntry.count({ where: { taskId: task.id, action: "task.undelegated" } })).toBe(1);
  });

  it("the owner records its own outcome", async () => {
    const { execution } = await sentExecutionOfA();
    const outcome = await call(outcomeRoute.POST, "POST", `/api/v1/executions/${execution.id}/outcome`, {
      token: tokens.a,
      params: { id: execution.id },
      body: { attempt_id: execution.attempt_id, outcome: "unknown", error: "timeout" },
    });
    expect(outcome.status, JSON.stringify(outcome.body)).toBe(200);
  });

  it("a token scoped to another workflow may not create or drive this one; one scoped to another tool may not call it", async () => {
    const create = await call(tasksRoute.POST, "POST", "/api/v1/tasks", {
      token: tokens.deliveryOnly,
      body: { workflow: "agent-task", intent_id: "x" },
    });
    expect(create.status).toBe(403);
    expect(create.body.detail).toContain("workflow agent-task");
    expect(
      (
        await call(tasksRoute.POST, "POST", "/api/v1/tasks", {
          token: tokens.deliveryOnly,
          body: { workflow: "delivery", intent_id: "x" },
        })
      ).status,
    ).toBe(201);

    // notes-bot owns an agent-task task: it may add a note, not refund.
    const created = await call(tasksRoute.POST, "POST", "/api/v1/tasks", {
      token: tokens.notesOnly,
      body: { workflow: "agent-task", intent_id: "notes" },
    });
    const id = created.body.id as string;
    let version = created.body.version as number;
    for (const to of ["PLANNING", "READY", "RUNNING"]) {
      const moved = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${id}/transitions`, {
        token: tokens.notesOnly,
        params: { id },
        body: { to, expected_version: version },
      });
      version = (moved.body.task as { version: number }).version;
    }
    const refund = await call(taskExecutionsRoute.POST, "POST", `/api/v1/tasks/${id}/executions`, {
      token: tokens.notesOnly,
      params: { id },
      body: {
        tool_call_id: "r1",
        tool: "payments.refund",
        request: { amount_cents: 100, currency: "usd", charge_id: "ch_1", customer_id: "cus_1" },
        expected_version: version,
      },
    });
    expect(refund.status).toBe(403);
    expect(refund.body.detail).toContain("tool payments.refund");
    const noteCall = await call(taskExecutionsRoute.POST, "POST", `/api/v1/tasks/${id}/executions`, {
      token: tokens.notesOnly,
      params: { id },
      body: { tool_call_id: "n1", tool: "crm.add_note", request: note, expected_version: version },
    });
    expect(noteCall.status, JSON.stringify(noteCall.body)).toBe(201);

    // A delegated agent-task task is still not drivable by a delivery-only token.
    const task = await runningTaskOfA();
    await call(delegationsRoute.POST, "POST", `/api/v1/tasks/${task.id}/delegations`, {
      token: tokens.a,
      params: { id: task.id },
      body: { identity: "spiffe://verity.local/agent/delivery-bot" },
    });
    expect(
      (
        await call(taskRoute.GET, "GET", `/api/v1/tasks/${task.id}`, {
          token: tokens.deliveryOnly,
          params: { id: task.id },
        })
      ).status,
    ).toBe(200);
    const drive = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${task.id}/transitions`, {
      token: tokens.deliveryOnly,
      params: { id: task.id },
      body: { to: "CANCELLED", expected_version: task.version },
    });
    expect(drive.status).toBe(403);
  });

  it("a call Verity makes is checked as an intent is: another agent's task is not found, another tool's scope refused", async () => {
    const refundBody = (version: number) => ({
      tool_call_id: "r1",
      tool: "payments.refund",
      request: { amount_cents: 100, currency: "usd", charge_id: "ch_1", customer_id: "cus_1" },
      expected_version: version,
    });
    const task = await runningTaskOfA();
    const stranger = await call(toolCallsRoute.POST, "POST", `/api/v1/tasks/${task.id}/tool-calls`, {
      token: tokens.b,
      params: { id: task.id },
      body: refundBody(task.version),
    });
    expect(stranger.status).toBe(404);

    const created = await call(tasksRoute.POST, "POST", "/api/v1/tasks", {
      token: tokens.notesOnly,
      body: { workflow: "agent-task", intent_id: "notes-tool-call" },
    });
    const id = created.body.id as string;
    let version = created.body.version as number;
    for (const to of ["PLANNING", "READY", "RUNNING"]) {
      const moved = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${id}/transitions`, {
        token: tokens.notesOnly,
        params: { id },
        body: { to, expected_version: version },
      });
      version = (moved.body.task as { version: number }).version;
    }
    const refused = await call(toolCallsRoute.POST, "POST", `/api/v1/tasks/${id}/tool-calls`, {
      token: tokens.notesOnly,
      params: { id },
      body: refundBody(version),
    });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain("tool payments.refund");
    expect(await db.execution.count({ where: { taskId: { in: [id, task.id] } } })).toBe(0);
  });

  it("taking over a live lease needs the take_over_leases scope", async () => {
    const task = await runningTaskOfA();
    const held = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease`, {
      token: tokens.a,
      params: { id: task.id },
      body: { ttl_seconds: 120 },
    });
    for (const token of [tokens.supervisor, tokens.delegate]) {
      await call(delegationsRoute.POST, "POST", `/api/v1/tasks/${task.id}/delegations`, {
        token: tokens.a,
        params: { id: task.id },
        body: {
          identity:
            token === tokens.supervisor
              ? "spiffe://verity.local/agent/supervisor"
              : "spiffe://verity.local/agent/agent-c",
        },
      });
    }
    const plain = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease`, {
      token: tokens.delegate,
      params: { id: task.id },
      body: {},
    });
    expect(plain.status).toBe(409);
    const unscoped = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease`, {
      token: tokens.delegate,
      params: { id: task.id },
      body: { take_over: true },
    });
    expect(unscoped.status).toBe(403);
    expect(unscoped.body.detail).toContain("take_over_leases");
    const taken = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease`, {
      token: tokens.supervisor,
      params: { id: task.id },
      body: { take_over: true },
    });
    expect(taken.status).toBe(200);
    expect(taken.body.holder).toBe("spiffe://verity.local/agent/supervisor");
    expect(BigInt(taken.body.fencing_token as string)).toBeGreaterThan(BigInt(held.body.fencing_token as string));
    // The take-over has its own audit entry, in the task's chain: who took it from whom, both tokens.
    const entries = await db.auditEntry.findMany({ where: { taskId: task.id, action: "lease.taken_over" } });
    expect(entries).toMatchObject([
      {
        stream: `task:${task.id}`,
        actor: "spiffe://verity.local/agent/supervisor",
        actorKind: "agent",
        details: {
          from: "spiffe://verity.local/agent/agent-a",
          previous_lease_id: held.body.lease_id,
          previous_fencing_token: held.body.fencing_token,
          lease_id: taken.body.lease_id,
          fencing_token: taken.body.fencing_token,
        },
      },
    ]);

    // A's old token is fenced off.
    const stale = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${task.id}/transitions`, {
      token: tokens.a,
      params: { id: task.id },
      body: { to: "CANCELLED", expected_version: task.version, fencing_token: held.body.fencing_token },
    });
    expect(stale.status).toBe(409);
    // Taking a lease that is free by then is no take-over, even when asked as one: no second entry.
    await call(releaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease/release`, {
      token: tokens.supervisor,
      params: { id: task.id },
      body: {},
      headers: { "Fencing-Token": taken.body.fencing_token as string },
    });
    const again = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${task.id}/lease`, {
      token: tokens.delegate,
      params: { id: task.id },
      body: { take_over: true },
    });
    expect(again.status).toBe(200);
    expect(await db.auditEntry.count({ where: { taskId: task.id, action: "lease.taken_over" } })).toBe(1);
  });
});
