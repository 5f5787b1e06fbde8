import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentScopes } from "@/lib/model/agent-scopes";
import { issueApiToken } from "@/lib/stores/api-tokens";
import { setTenantStatus } from "@/lib/stores/tenants";
import { openTenant } from "@/lib/use-cases/tenants/open-tenant";
import * as tasksRoute from "@/app/api/v1/tasks/route";
import * as taskRoute from "@/app/api/v1/tasks/[id]/route";
import * as transitionsRoute from "@/app/api/v1/tasks/[id]/transitions/route";
import * as leaseRoute from "@/app/api/v1/tasks/[id]/lease/route";
import * as instructionsRoute from "@/app/api/v1/tasks/[id]/instructions/route";
import * as auditEntriesRoute from "@/app/api/v1/audit/entries/route";
import * as taskExecutionsRoute from "@/app/api/v1/tasks/[id]/executions/route";
import * as delegationsRoute from "@/app/api/v1/tasks/[id]/delegations/route";
import * as eventsRoute from "@/app/api/v1/events/route";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { callRoute as call, serveRoutesFrom } from "@/tests/helpers/route-call";

/**
 * Tenants through the real route handlers (real Requests, the process-wide
 * handle pointed at a PGlite with two tenants): an agent of one tenant
 * cannot tell another tenant's task from one that does not exist, reach it
 * by any route, or find it in a list or the audit log; the same task id
 * lives in both tenants; a suspended tenant's agents are refused.
 */
let t: TestDatabase;
const tokens = {} as Record<"home" | "acme", string>;
const system = { identity: "system:test", kind: "system" } as const;
const everything: AgentScopes = { workflows: "*", tools: "*", take_over_leases: false };

beforeAll(async () => {
  t = await openTestPglite();
  serveRoutesFrom(t);
  await openTenant(t, { id: "acme", name: "Acme" }, system);
  const token = async (tenantId: string, name: string) =>
    (
      await issueApiToken(
        t.forTenant(tenantId),
        { name, identity: `spiffe://verity.local/agent/${name}`, role: "agent", scopes: everything },
        system,
      )
    ).token;
  tokens.home = await token("default", "home-bot");
  tokens.acme = await token("acme", "acme-bot");
});
afterAll(async () => {
  serveRoutesFrom(undefined);
  await t?.close();
});

const createTask = (token: string, body: Record<string, unknown>) =>
  call(tasksRoute.POST, "POST", "/api/v1/tasks", { token, body });

describe("tenants through the API", () => {
  it("another tenant's task answers exactly as a task that does not exist, on every route tried", async () => {
    const created = await createTask(tokens.home, { workflow: "agent-task", intent_id: "home-intent" });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const missing = `task_does_not_exist_${Date.now()}`;
    const shapesOf = new Map<string, unknown>();
    for (const taskId of [id, missing]) {
      const read = await call(taskRoute.GET, "GET", `/api/v1/tasks/${taskId}`, {
        token: tokens.acme,
        params: { id: taskId },
      });
      const moved = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${taskId}/transitions`, {
        token: tokens.acme,
        params: { id: taskId },
        body: { to: "PLANNING", expected_version: 1 },
      });
      const leased = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${taskId}/lease`, {
        token: tokens.acme,
        params: { id: taskId },
        body: { ttl_seconds: 30 },
      });
      const instructed = await call(instructionsRoute.GET, "GET", `/api/v1/tasks/${taskId}/instructions`, {
        token: tokens.acme,
        params: { id: taskId },
      });
      // The same status and the same words but for the id itself: no existence oracle.
      const shapes = [read, moved, leased, instructed].map((r) => [
        r.status,
        String(r.body.detail).replace(taskId, "<id>"),
      ]);
      expect(shapes.map(([status]) => status)).toEqual([404, 404, 404, 404]);
      shapesOf.set(taskId === id ? "another tenant's" : "missing", shapes);
    }
    expect(shapesOf.get("another tenant's")).toEqual(shapesOf.get("missing"));
    // And nothing was written for it: the home task is as it was.
    const home = await call(taskRoute.GET, "GET", `/api/v1/tasks/${id}`, { token: tokens.home, params: { id } });
    expect(home.body).toMatchObject({ id, version: 1, status: "RECEIVED" });
  });

  it("lists and the audit log show each tenant its own", async () => {
    const sharedId = `order-${Date.now()}`;
    const home = await createTask(tokens.home, { task_id: sharedId, workflow: "agent-task", intent_id: "home" });
    expect(home.status).toBe(201);
    const acme = await createTask(tokens.acme, { workflow: "agent-task", intent_id: "acme" });
    expect(acme.status).toBe(201);
    const listed = await call(tasksRoute.GET, "GET", "/api/v1/tasks", { token: tokens.acme });
    const ids = (listed.body.items as Array<{ id: string }>).map((i) => i.id);
    expect(ids).toContain(acme.body.id);
    expect(ids).not.toContain(sharedId);
    const audit = await call(auditEntriesRoute.GET, "GET", `/api/v1/audit/entries?task_id=${sharedId}`, {
      token: tokens.acme,
    });
    expect([200, 403]).toContain(audit.status);
    if (audit.status === 200) expect(audit.body.items).toEqual([]);
  });

  it("the keys a caller chooses are each tenant's own: the same task, transition, lease, instruction, call and event ids live in both", async () => {
    const taskId = `order-${Date.now()}`;
    const results = {} as Record<"home" | "acme", { executionKey: string; lease: string; instruction: string }>;
    for (const tenant of ["home", "acme"] as const) {
      const token = tokens[tenant];
      const params = { id: taskId };
      const created = await createTask(token, { task_id: taskId, workflow: "agent-task", intent_id: "same-intent" });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      let version = 1;
      for (const to of ["PLANNING", "READY", "RUNNING"]) {
        const moved = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${taskId}/transitions`, {
          token,
          params,
          body: { transition_id: `same-transition-${to}`, to, expected_version: version },
        });
        expect(moved.status, JSON.stringify(moved.body)).toBe(200);
        expect(moved.body.replayed ?? false).toBe(false);
        version = (moved.body.task as { version: number }).version;
      }
      const lease = await call(leaseRoute.POST, "POST", `/api/v1/tasks/${taskId}/lease`, {
        token,
        params,
        body: { ttl_seconds: 60, lease_id: "same-lease" },
      });
      expect(lease.status, JSON.stringify(lease.body)).toBe(200);
      // The first fencing token of each tenant's lease: neither saw the other's.
      expect(lease.body.fencing_token).toBe("1");
      const instruction = await call(instructionsRoute.POST, "POST", `/api/v1/tasks/${taskId}/instructions`, {
        token,
        params,
        body: {
          expected_seq: 0,
          instruction_id: "same-instruction",
          topic: "refunds",
          directive: "allow",
          text: `words of ${tenant}`,
        },
      });
      expect(instruction.status, JSON.stringify(instruction.body)).toBe(201);
      const delegated = await call(delegationsRoute.POST, "POST", `/api/v1/tasks/${taskId}/delegations`, {
        token,
        params,
        body: { identity: "spiffe://verity.local/agent/helper" },
      });
      expect(delegated.status, JSON.stringify(delegated.body)).toBe(201);
      const intent = await call(taskExecutionsRoute.POST, "POST", `/api/v1/tasks/${taskId}/executions`, {
        token,
        params,
        body: {
          tool_call_id: "note-1",
          tool: "crm.add_note",
          request: { customer_id: "cus_1", text: `note of ${tenant}` },
          expected_version: version,
        },
        headers: { "Fencing-Token": lease.body.fencing_token as string },
      });
      expect(intent.status, JSON.stringify(intent.body)).toBe(201);
      const event = await call(eventsRoute.POST, "POST", "/api/v1/events", {
        token,
        body: { event_id: "evt_same", source: "crm", type: "note.read", task_id: taskId, payload: { tenant } },
      });
      expect(event.status, JSON.stringify(event.body)).toBe(201);
      expect(event.body.duplicate).toBe(false);
      results[tenant] = {
        executionKey: (intent.body.execution as { idempotency_key: string }).idempotency_key,
        lease: lease.body.lease_id as string,
        instruction: (instruction.body.instruction as { id: string; text: string }).text,
      };
    }
    expect(results.home.lease).toBe("same-lease");
    expect(results.acme.lease).toBe("same-lease");
    expect(results.home.instruction).toBe("words of home");
    expect(results.acme.instruction).toBe("words of acme");
    // Both tenants' calls may meet at one provider account: their keys differ,
    // and the first tenant's keep the form they had before tenants.
    expect(results.home.executionKey).toBe(`vrt:${taskId}:note-1`);
    expect(results.acme.executionKey).toBe(`vrt.acme:${taskId}:note-1`);
    const home = await call(taskRoute.GET, "GET", `/api/v1/tasks/${taskId}`, {
      token: tokens.home,
      params: { id: taskId },
    });
    expect(home.body).toMatchObject({ id: taskId, intent_id: "same-intent" });
  });

  it("a suspended tenant's agents are refused in words, and served again once it is reactivated", async () => {
    await setTenantStatus(t.platformDb, "acme", "suspended", "contract paused", system);
    const refused = await call(tasksRoute.GET, "GET", "/api/v1/tasks", { token: tokens.acme });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/tenant \(acme\) is suspended/);
    // The other tenant carries on.
    expect((await call(tasksRoute.GET, "GET", "/api/v1/tasks", { token: tokens.home })).status).toBe(200);
    await setTenantStatus(t.platformDb, "acme", "active", "contract resumed", system);
    expect((await call(tasksRoute.GET, "GET", "/api/v1/tasks", { token: tokens.acme })).status).toBe(200);
    const register = await t.forTenant("acme").auditEntry.findMany({
      where: { action: { startsWith: "tenant." } },
      orderBy: { at: "asc" },
    });
    expect(register.map((e) => e.action)).toEqual(["tenant.created", "tenant.suspended", "tenant.reactivated"]);
  });
});
