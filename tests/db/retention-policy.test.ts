import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { recordInstruction } from "@/lib/stores/instructions";
import { getRetentionPolicy, setRetentionTerm } from "@/lib/stores/retention-policies";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { applyRetentionPolicy } from "@/lib/use-cases/retention/apply-retention-policy";
import { agent, alice, noteExecution, runningTask } from "@/tests/helpers/effects";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * A tenant's retention policy per data class, on the embedded database: each
 * finished task is kept for the term of the most sensitive class its data
 * holds (its workflow's declaration, the tools it called, free text counted
 * as confidential), a class with no term keeps its tasks forever, and no
 * policy deletes nothing. The run's clock is put ahead (as in
 * task-retention.test.ts) instead of waiting days.
 *
 * The `data_classes` declarations are being added to workflow and tool
 * definitions on another branch; until then this test writes them into the
 * stored definitions as the owner, after the tasks have run.
 */

const admin: Actor = { identity: "spiffe://verity.local/user/admin", kind: "user" };
const day = 86_400_000;
const ahead = (days: number) => () => Date.now() + days * day;

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await openTestPglite();
  db = t.db;
});
afterAll(async () => t.close());

async function finish(taskId: string): Promise<void> {
  const task = await db.task.findFirstOrThrow({ where: { id: taskId } });
  await transitionTask(db, taskId, { expected_version: task.version, to: "CANCELLED", reason: "done" }, agent);
}

/** A finished task that called crm.add_note once, successfully. */
async function finishedTaskWithNote(): Promise<string> {
  const note = await noteExecution(db);
  await recordOutcome(
    db,
    note.id,
    { attempt_id: note.attemptId, outcome: "succeeded", evidence: { execution_id: note.id } },
    agent,
  );
  await finish(note.taskId);
  return note.taskId;
}

async function taskExists(id: string): Promise<boolean> {
  return (await t.sql("SELECT 1 FROM tasks WHERE id = $1", [id])).length > 0;
}

describe("a tenant's retention policy", () => {
  it("is refused in words for an unknown class or a term out of range, and writes nothing", async () => {
    await expect(setRetentionTerm(db, { data_class: "secret" as "public", keep_days: 5 }, admin)).rejects.toMatchObject(
      {
        code: "validation_failed",
      },
    );
    await expect(setRetentionTerm(db, { data_class: "public", keep_days: 0 }, admin)).rejects.toMatchObject({
      code: "validation_failed",
    });
    expect((await getRetentionPolicy(db)).isSet).toBe(false);
    expect(await t.sql("SELECT 1 FROM audit_entries WHERE action = 'retention.policy_set'")).toHaveLength(0);
  });

  it("when none is set, deletes nothing and records nothing", async () => {
    const task = await runningTask(db);
    await finish(task.id);
    expect(await applyRetentionPolicy(db, admin, { clock: ahead(30) })).toBeNull();
    expect(await taskExists(task.id)).toBe(true);
  });

  it("keeps each finished task for the term of the most sensitive class it holds, a class without a term forever", async () => {
    const plain = await runningTask(db); // the workflow's documents only: declared public below
    await finish(plain.id);
    const withWords = await runningTask(db); // an instruction's free text: confidential
    await recordInstruction(
      db,
      withWords.id,
      { expected_seq: 0, topic: "refund", directive: "allow", text: "Refund order 42", source: "user" },
      alice,
    );
    await finish(withWords.id);
    const withTool = await finishedTaskWithNote(); // crm.add_note: declared restricted below

    await t.sql(
      `UPDATE workflow_versions SET definition = jsonb_set(definition::jsonb, '{data_classes}', '{"": "public"}'::jsonb) WHERE name = 'agent-task'`,
    );
    await t.sql(
      `UPDATE tool_versions SET definition = jsonb_set(definition::jsonb, '{data_classes}', '{"request": {"": "restricted"}}'::jsonb) WHERE name = 'crm.add_note'`,
    );

    await setRetentionTerm(db, { data_class: "public", keep_days: 10 }, admin);
    await setRetentionTerm(db, { data_class: "confidential", keep_days: 30 }, admin);
    const policy = await getRetentionPolicy(db);
    expect(policy.terms).toEqual({ public: 10, internal: null, confidential: 30, restricted: null });
    const changes = await t.sql<{ details: Record<string, unknown> }>(
      "SELECT details FROM audit_entries WHERE action = 'retention.policy_set' ORDER BY at, seq",
    );
    expect(changes.map((c) => c.details)).toEqual([
      { data_class: "public", keep_days: 10, previous_keep_days: null, version: 1 },
      { data_class: "confidential", keep_days: 30, previous_keep_days: null, version: 1 },
    ]);

    // 25 days on: past public's 10, not confidential's 30.
    const first = await applyRetentionPolicy(db, admin, { clock: ahead(25) });
    // (the task of the test above is public too, and goes with it)
    expect(first?.tasks.map((x) => x.id)).toContain(plain.id);
    expect(first?.tasks.every((x) => x.dataClass === "public")).toBe(true);
    expect(await taskExists(plain.id)).toBe(false);
    expect(await taskExists(withWords.id)).toBe(true);
    expect(first?.entry?.details).toMatchObject({ policy: policy.terms });
    expect(first?.entry?.details.tasks).toContainEqual(expect.objectContaining({ id: plain.id, data_class: "public" }));

    // 30 days on: the confidential one goes; the restricted one has no term and stays.
    const second = await applyRetentionPolicy(db, admin, { clock: ahead(30) });
    expect(second?.tasks.map((x) => [x.id, x.dataClass])).toEqual([[withWords.id, "confidential"]]);
    expect(await taskExists(withTool)).toBe(true);

    await setRetentionTerm(db, { data_class: "restricted", keep_days: 30 }, admin);
    const third = await applyRetentionPolicy(db, admin, { clock: ahead(30) });
    expect(third?.tasks.map((x) => [x.id, x.dataClass])).toEqual([[withTool, "restricted"]]);
    expect(await t.sql("SELECT 1 FROM executions WHERE task_id = $1", [withTool])).toHaveLength(0);
    expect((await verifyAuditChains(db)).ok).toBe(true);
  });
});
