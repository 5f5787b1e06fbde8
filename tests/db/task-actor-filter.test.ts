import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/model/actor";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { countTasks, listTasks, type ListTasksQuery } from "@/lib/use-cases/tasks/list-tasks";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * The task list's actor filter on the embedded database: a part of an actor
 * is looked for among the tenant's distinct actors, and the tasks are those
 * they changed last (lib/use-cases/tasks/list-tasks.ts). Every match, paged,
 * as the API and the exports return them; the PostgreSQL side, and what it
 * reads, in tests/postgres/task-text-filters.test.ts.
 */

const refunds: Actor = { identity: "spiffe://verity.test/agent/Refund-Bot", kind: "agent" };
const refundsToo: Actor = { identity: "spiffe://verity.test/agent/refund-bot-2", kind: "agent" };
const other: Actor = { identity: "spiffe://verity.test/agent/other", kind: "agent" };
const percent: Actor = { identity: "agent:50%_off", kind: "agent" };

let t: TestDatabase;
/** Newest change first, per actor that changed them last. */
const byActor = new Map<string, string[]>();

beforeAll(async () => {
  t = await openTestPglite();
  const last: Array<[Actor, string]> = [];
  for (let i = 0; i < 12; i++) {
    const creator = [refunds, other, other, refundsToo][i % 4]!;
    const { task } = await createTask(t.db, { workflow: "agent-task", intent_id: `actor-filter-${i}` }, creator);
    let actor = creator;
    if (i % 3 === 0) {
      actor = i % 2 ? percent : refunds;
      await transitionTask(t.db, task.id, { expected_version: task.version, to: "PLANNING" }, actor);
    }
    last.push([actor, task.id]);
  }
  for (const [actor, id] of last.reverse()) byActor.set(actor.identity, [...(byActor.get(actor.identity) ?? []), id]);
}, 60_000);
afterAll(async () => t?.close());

async function allPages(query: ListTasksQuery): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listTasks(t.db, { ...query, cursor });
    ids.push(...page.items.map((task) => task.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

/** The tasks these actors changed last, newest change first, as the list orders them. */
async function expected(...actors: Actor[]): Promise<string[]> {
  const rows = await t.sql<{ id: string }>(
    "SELECT id FROM tasks WHERE updated_by = ANY($1) ORDER BY updated_at DESC, id DESC",
    [actors.map((a) => a.identity)],
  );
  return rows.map((r) => r.id);
}

describe("the task list's actor filter on the embedded database", () => {
  it("a part of an actor finds every task of every actor it is part of, case-insensitively, in pages", async () => {
    expect(await expected(refunds, refundsToo)).toHaveLength(
      byActor.get(refunds.identity)!.length + byActor.get(refundsToo.identity)!.length,
    );
    expect(await allPages({ actor: "REFUND-bot", limit: 2 })).toEqual(await expected(refunds, refundsToo));
    expect(await allPages({ actor: "bot-2", limit: 2 })).toEqual(await expected(refundsToo));
    expect(await allPages({ actor: "agent/", limit: 5, sort: "created" })).toHaveLength(
      (await expected(refunds, refundsToo, other)).length,
    );
  });

  it("a whole SPIFFE id finds that actor's tasks exactly", async () => {
    expect(await allPages({ actor: refunds.identity, limit: 3 })).toEqual(await expected(refunds));
    expect(await allPages({ actor: refunds.identity.toLowerCase() })).toEqual([]);
  });

  it("reads what was typed literally: LIKE's wildcards match only themselves", async () => {
    expect(await allPages({ actor: "50%_" })).toEqual(await expected(percent));
    expect(await allPages({ actor: "%" })).toEqual(await expected(percent));
    expect(await allPages({ actor: "_" })).toEqual(await expected(percent));
    expect(await allPages({ actor: "nobody-here" })).toEqual([]);
  });

  it("the total counts the same tasks", async () => {
    expect(await countTasks(t.db, { actor: "refund-bot" })).toEqual({
      count: (await expected(refunds, refundsToo)).length,
      among: null,
    });
    expect(await countTasks(t.db, { actor: "nobody-here" })).toEqual({ count: 0, among: null });
  });
});
