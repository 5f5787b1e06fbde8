import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Execution } from "@/lib/generated/prisma/client";
import type { Principal, Role } from "@/lib/model/permissions";
import { MASKED_VALUE } from "@/lib/model/data-classes";
import { parseCsv } from "@/lib/use-cases/audit/audit-export";
import { createTenant } from "@/lib/stores/tenants";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";
import { raiseDivergence } from "@/lib/use-cases/alerts/divergence";
import {
  exportAlertList,
  exportExecutionList,
  exportTaskList,
  listExportRowCap,
} from "@/lib/use-cases/exports/list-exports";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { refund, refundExecution } from "@/tests/helpers/effects";

/**
 * The lists' exports on a real database: every matching row (past one
 * page), the page's filters, the reader's tenant only, and restricted fields
 * masked for a reader without clearance, in both formats.
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

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

async function jsonLines(stream: ReadableStream<Uint8Array>): Promise<Array<Record<string, unknown>>> {
  return (await text(stream))
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("list exports", () => {
  it("exports every call the filters select, customers in the clear for an operator and masked for an auditor", async () => {
    const { db } = database;
    const calls: Execution[] = [];
    for (let i = 0; i < 3; i++)
      calls.push(await refundExecution(db, { request: { ...refund, customer_id: `cus_export_${i}` } }));
    const asOperator = await jsonLines(
      exportExecutionList(db, person("operator"), { tool: "payments.refund" }, "jsonl"),
    );
    const ids = asOperator.map((r) => r.id);
    for (const c of calls) expect(ids).toContain(c.id);
    const first = asOperator.find((r) => r.id === calls[0]!.id);
    expect(first?.request).toMatchObject({ customer_id: "cus_export_0", amount_cents: 2500 });
    expect(first?.idempotency_key).toBe(calls[0]!.idempotencyKey);

    const csv = await text(exportExecutionList(db, person("auditor"), { tool: "payments.refund" }, "csv"));
    expect(csv).not.toContain("cus_export_");
    const [header, ...rows] = parseCsv(csv);
    expect(header?.cells).toContain("request");
    const requestAt = header!.cells.indexOf("request");
    const row = rows.find((r) => r.cells[0] === calls[0]!.id);
    expect(JSON.parse(row!.cells[requestAt]!)).toMatchObject({ customer_id: MASKED_VALUE, amount_cents: 2500 });
  });

  it("applies the page's filters: a status no call has exports the header and nothing else", async () => {
    const { db } = database;
    await refundExecution(db);
    const none = await text(exportExecutionList(db, person("admin"), { status: "CANCELLED" }, "csv"));
    expect(none.trim().split("\n")).toHaveLength(1);
    expect(() => exportExecutionList(db, person("admin"), { status: "NOT_A_STATUS" as never }, "csv")).toThrow();
  });

  it("exports more than one page of tasks, newest first, in the filters' workflow", async () => {
    const { db } = database;
    // 3 calls above made 3+ tasks; make enough for two pages of 200.
    const before = (await jsonLines(exportTaskList(db, person("admin"), {}, "jsonl"))).length;
    const { createTask } = await import("@/lib/use-cases/tasks/create-task");
    for (let i = 0; i < 205; i++)
      await createTask(
        db,
        { workflow: "agent-task", intent_id: `bulk-${i}` },
        { identity: "spiffe://verity.local/agent/bulk", kind: "agent" },
      );
    const all = await jsonLines(exportTaskList(db, person("auditor"), { workflow: "agent-task" }, "jsonl"));
    expect(all.length).toBe(before + 205);
    expect(new Set(all.map((t) => t.id)).size).toBe(all.length);
    const times = all.map((t) => String(t.updated_at));
    expect([...times].sort().reverse()).toEqual(times);
    expect(listExportRowCap).toBeGreaterThan(all.length);
  });

  it("keeps each export to the reader's tenant", async () => {
    const { db, platformDb, forTenant } = database;
    const mine = await refundExecution(db);
    const otherId = `export-other-${Date.now().toString(36)}`;
    await createTenant(
      platformDb,
      { id: otherId, name: "Other" },
      { identity: "spiffe://verity.local/system/test", kind: "system" },
    );
    const other: Db = forTenant(otherId);
    await registerBuiltInWorkflows(other);
    await registerBuiltInTools(other);
    const theirs = await refundExecution(other);
    const theirExecutions = await jsonLines(exportExecutionList(other, person("admin", otherId), {}, "jsonl"));
    expect(theirExecutions.map((e) => e.id)).toEqual([theirs.id]);
    const theirTasks = await jsonLines(exportTaskList(other, person("admin", otherId), {}, "jsonl"));
    expect(theirTasks.map((t) => t.id)).toEqual([theirs.taskId]);
    const myExecutions = (await jsonLines(exportExecutionList(db, person("admin"), {}, "jsonl"))).map((e) => e.id);
    expect(myExecutions).toContain(mine.id);
    expect(myExecutions).not.toContain(theirs.id);
  });

  it("exports alerts with the page's filters, in the order of the page", async () => {
    const { db } = database;
    const call = await refundExecution(db);
    await db.$transaction((tx) =>
      raiseDivergence(
        tx,
        {
          kind: "effect_mismatch",
          taskId: call.taskId,
          executionId: call.id,
          message: "test alert for export",
          internal: {},
          external: {},
        },
        { identity: "spiffe://verity.local/system/reconciler", kind: "system" },
      ),
    );
    const alerts = await jsonLines(exportAlertList(db, person("operator"), { task: call.taskId }, "jsonl"));
    expect(alerts.map((a) => a.message)).toEqual(["test alert for export"]);
    expect(alerts[0]).toMatchObject({ task_id: call.taskId, execution_id: call.id });
    const csv = await text(exportAlertList(db, person("auditor"), { task: "no-such-task" }, "csv"));
    expect(csv).toBe(
      "id,kind,severity,status,task_id,execution_id,occurrences,message,created_at,last_seen_at,updated_at\n",
    );
  });
});
