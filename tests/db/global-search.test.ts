import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Principal, Role } from "@/lib/model/permissions";
import { createTenant } from "@/lib/stores/tenants";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";
import { globalSearch, intentWindow, type GlobalSearchResult } from "@/lib/use-cases/search/global-search";
import { rotateDataKey } from "@/lib/stores/data-keys";
import { isAppError } from "@/lib/core/errors";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { refund, refundExecution } from "@/tests/helpers/effects";

/**
 * The global search on a real database: a customer found through the blind
 * index of a sealed request (never in the clear in the row), only for a
 * reader cleared for restricted data; every kind kept to the caller's tenant.
 */

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestPglite();
});
afterAll(async () => database?.close());

function person(role: Role, tenantId = "default"): Principal {
  return {
    kind: "user",
    id: `u-${role}`,
    identity: `spiffe://verity.local/user/${role}`,
    role,
    displayName: role,
    tenantId,
  };
}

const hitsOf = (result: GlobalSearchResult, kind: string) => result.groups.find((g) => g.kind === kind)?.hits ?? [];

describe("global search", () => {
  it("finds a call by its customer through the blind index, the request itself sealed", async () => {
    const { db, sql } = database;
    const execution = await refundExecution(db, { request: { ...refund, customer_id: "cus_search_A1" } });
    const [stored] = await sql<{ request: unknown; customer_index: string | null }>(
      "SELECT request, customer_index FROM executions WHERE id = $1",
      [execution.id],
    );
    // Sealed: the customer id is nowhere in the row in the clear, the index is an HMAC.
    expect(JSON.stringify(stored?.request)).not.toContain("cus_search_A1");
    expect(stored?.customer_index).toMatch(/^dk_[^:]+:[0-9a-f]{64}$/);

    const result = await globalSearch(db, person("operator"), { q: "cus_search_A1" });
    expect(hitsOf(result, "customer")).toEqual([
      expect.objectContaining({ value: "cus_search_A1", executionId: execution.id, taskId: execution.taskId }),
    ]);
    expect(result.notSearched.map((n) => n.kind)).not.toContain("customer");
    // Exact match of the whole id only: an HMAC has no prefixes, and another customer is not found.
    expect(hitsOf(await globalSearch(db, person("operator"), { q: "cus_search_A" }), "customer")).toEqual([]);
  });

  it("never searches customers for a reader without data:restricted, and says so without saying what matched", async () => {
    const { db } = database;
    await refundExecution(db, { request: { ...refund, customer_id: "cus_search_B2" } });
    for (const role of ["auditor", "engineer"] as const) {
      const result = await globalSearch(db, person(role), { q: "cus_search_B2" });
      expect(hitsOf(result, "customer")).toEqual([]);
      expect(result.notSearched.map((n) => n.kind)).toContain("customer");
      // The same answer whether or not such a customer exists.
      const none = await globalSearch(db, person(role), { q: "cus_search_nobody" });
      expect(none.notSearched).toEqual(result.notSearched);
      expect(none.groups).toEqual(result.groups);
    }
  });

  it("finds a call by execution id and by idempotency key, a task by id and by intent, an actor by a part of it", async () => {
    const { db } = database;
    const execution = await refundExecution(db);
    const auditor = person("auditor");
    expect(hitsOf(await globalSearch(db, auditor, { q: execution.id }), "execution")[0]?.executionId).toBe(
      execution.id,
    );
    const byKey = await globalSearch(db, auditor, { q: execution.idempotencyKey });
    expect(hitsOf(byKey, "idempotency_key").map((h) => h.executionId)).toEqual([execution.id]);
    expect(hitsOf(await globalSearch(db, auditor, { q: execution.taskId }), "task")[0]?.taskId).toBe(execution.taskId);
    expect(hitsOf(await globalSearch(db, auditor, { q: "refun" }), "intent").length).toBeGreaterThan(0);
    // The agent's SPIFFE id is spiffe://verity.local/agent/refund-bot: its short forms find it.
    for (const q of ["agent/refund-bot", "refund-bot", "REFUND-BOT"]) {
      const actors = hitsOf(await globalSearch(db, auditor, { q }), "actor").map((h) => h.value);
      expect(actors).toContain("spiffe://verity.local/agent/refund-bot");
    }
    // An operator has no audit:read: actors are not searched for them.
    const operator = await globalSearch(db, person("operator"), { q: "refund-bot" });
    expect(hitsOf(operator, "actor")).toEqual([]);
    expect(operator.notSearched.map((n) => n.kind)).toEqual(["actor"]);
  });

  it("treats LIKE's wildcards as text and refuses a query too short to mean anything", async () => {
    const { db } = database;
    const everything = await globalSearch(db, person("admin"), { q: "%%" });
    expect(everything.total).toBe(0);
    await expect(globalSearch(db, person("admin"), { q: " a " })).rejects.toSatisfy(
      (e) => isAppError(e) && e.code === "validation_failed" && e.message.startsWith("q:"),
    );
  });

  it("bounds every kind by the limit and says that more matched", async () => {
    const { db } = database;
    for (let i = 0; i < 3; i++) await refundExecution(db, { request: { ...refund, customer_id: "cus_many" } });
    const result = await globalSearch(db, person("admin"), { q: "cus_many", limit: 2 });
    const group = result.groups.find((g) => g.kind === "customer");
    expect(group?.hits).toHaveLength(2);
    expect(group?.more).toBe(true);
  });

  it("finds a customer's calls recorded before and after a key rotation", async () => {
    const { db } = database;
    const before = await refundExecution(db, { request: { ...refund, customer_id: "cus_rotated" } });
    await rotateDataKey(db, "default", { identity: "spiffe://verity.local/system/test", kind: "system" });
    const after = await refundExecution(db, { request: { ...refund, customer_id: "cus_rotated" } });
    const hits = hitsOf(await globalSearch(db, person("operator"), { q: "cus_rotated" }), "customer");
    expect(hits.map((h) => h.executionId).sort()).toEqual([before.id, after.id].sort());
  });

  it("keeps every kind to the caller's tenant: another tenant's customer, call, key, task and actor are not found", async () => {
    const { db, platformDb, forTenant } = database;
    const mine = await refundExecution(db, { request: { ...refund, customer_id: "cus_shared_name" } });
    const otherId = `search-other-${Date.now().toString(36)}`;
    await createTenant(
      platformDb,
      { id: otherId, name: "Other" },
      { identity: "spiffe://verity.local/system/test", kind: "system" },
    );
    const other: Db = forTenant(otherId);
    await registerBuiltInWorkflows(other);
    await registerBuiltInTools(other);
    const theirs = await refundExecution(other, { request: { ...refund, customer_id: "cus_shared_name" } });
    const admin = person("admin");
    const customers = hitsOf(await globalSearch(db, admin, { q: "cus_shared_name" }), "customer");
    expect(customers.map((h) => h.executionId)).toEqual([mine.id]);
    const theirsForThem = hitsOf(
      await globalSearch(other, person("admin", otherId), { q: "cus_shared_name" }),
      "customer",
    );
    expect(theirsForThem.map((h) => h.executionId)).toEqual([theirs.id]);
    for (const q of [theirs.id, theirs.idempotencyKey, theirs.taskId]) {
      expect((await globalSearch(db, admin, { q })).total).toBe(0);
    }
  });

  it("finds an intent typed whole among every task, and a part of one among the newest tasks only (docs/cost-growth.md)", async () => {
    const { db, sql } = database;
    const old = await refundExecution(db, { request: { ...refund, customer_id: "cus_search_window" } });
    await sql("UPDATE tasks SET intent_id = $1, updated_at = now() - interval '30 days' WHERE id = $2", [
      "ancient-intent-4711",
      old.taskId,
    ]);
    // More tasks changed since than the window holds: copies of the old row, each newer than it.
    await sql(
      `INSERT INTO tasks (tenant_id, id, workflow_name, workflow_version, workflow_digest, status, version, state, intent_id,
                          created_at, created_by, updated_at, updated_by)
       SELECT tenant_id, id || '_newer_' || g, workflow_name, workflow_version, workflow_digest, status, version, state,
              'newer-' || g, created_at, created_by, now() - make_interval(secs => g), updated_by
         FROM tasks, generate_series(1, ${intentWindow}) AS g WHERE id = $1`,
      [old.taskId],
    );
    const operator = person("operator");
    expect(hitsOf(await globalSearch(db, operator, { q: "ancient-intent-4711" }), "intent")).toEqual([
      expect.objectContaining({ value: "ancient-intent-4711", taskId: old.taskId }),
    ]);
    // A part of it is looked for among the newest tasks only: every task read per keystroke otherwise.
    expect(hitsOf(await globalSearch(db, operator, { q: "ancient-intent" }), "intent")).toEqual([]);
    expect(hitsOf(await globalSearch(db, operator, { q: "newer-12" }), "intent").length).toBeGreaterThan(0);
  });
});
