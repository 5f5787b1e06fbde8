import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { captureStatements } from "@/tests/helpers/statement-plans";

/**
 * transitionTask remembers the row it wrote (lib/stores/tasks/task-store.ts)
 * and builds the task's next change on it without reading: one statement
 * per change for an agent driving its task through one server. The swap
 * requires the very row version it remembers, so a row anyone changed
 * since (another server, or any write at all) is read afresh, never
 * overwritten with what this process believed.
 */
const agent: Actor = { identity: "spiffe://verity.test/agent/remembering", kind: "agent" };
let pgdb: PostgresTestDatabase;
let otherServer: DatabaseHandle;
beforeAll(async () => {
  pgdb = await createPostgresTestDatabase({ poolSize: 4 });
  // A second server process on the same database: its own pools, so nothing remembered is shared.
  otherServer = openDatabase({ kind: "postgres", url: pgdb.url }, { poolSize: 2 });
});
afterAll(async () => {
  await otherServer?.close();
  await pgdb?.drop();
});

const hops = (n: number) => ({ patch: { budget: { hops_used: n } } });

async function runningTask(): Promise<{ id: string; version: number }> {
  const { task } = await createTask(pgdb.db, { workflow: "agent-task", intent_id: "remembered" }, agent);
  let version = task.version;
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = (await transitionTask(pgdb.db, task.id, { expected_version: version, to }, agent)).task.version;
  return { id: task.id, version };
}

describe("the row a server wrote last", () => {
  it("carries the next change without a read: one statement", async () => {
    const task = await runningTask();
    const { result, sent } = await captureStatements(() =>
      transitionTask(pgdb.db, task.id, { expected_version: task.version, ...hops(1) }, agent),
    );
    expect(result.task.version).toBe(task.version + 1);
    expect(sent.map((s) => s.text.replace(/\s+/g, " ").trim().slice(0, 30))).toEqual([
      "WITH updated AS ( UPDATE tasks",
    ]);
    expect((await getTaskOrThrow(pgdb.db, task.id)).state.budget.hops_used).toBe(1);
  });

  it("is not built upon once another server changed the task: that change stands, the stale caller gets version_conflict", async () => {
    const task = await runningTask();
    await transitionTask(otherServer.db, task.id, { expected_version: task.version, ...hops(7) }, agent);
    // This server still remembers the task at task.version; the agent asks from that version too.
    await expect(
      transitionTask(pgdb.db, task.id, { expected_version: task.version, ...hops(2) }, agent),
    ).rejects.toMatchObject({ code: "version_conflict" });
    const now = await getTaskOrThrow(pgdb.db, task.id);
    expect(now.version).toBe(task.version + 1);
    expect(now.state.budget.hops_used).toBe(7);
  });

  it("is not built upon after any write to the row, even one that kept the version number", async () => {
    const task = await runningTask();
    // Nothing in Verity writes a task without a new version; a hand-made repair on the database might.
    await pgdb.db.$executeRaw`
      UPDATE tasks SET state = jsonb_set(state, '{budget,tokens_spent}', '5'::jsonb) WHERE id = ${task.id}`;
    const { result, sent } = await captureStatements(() =>
      transitionTask(pgdb.db, task.id, { expected_version: task.version, ...hops(3) }, agent),
    );
    // The remembered swap lost on the row version (xmin); the row was read and the change built on it.
    expect(sent.filter((s) => s.text.includes("UPDATE tasks"))).toHaveLength(2);
    expect(result.task.state.budget.tokens_spent).toBe(5);
    const now = await getTaskOrThrow(pgdb.db, task.id);
    expect(now.state.budget).toMatchObject({ hops_used: 3, tokens_spent: 5 });
  });
});
