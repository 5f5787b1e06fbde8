import { describe, expect, it } from "vitest";
import type { Actor } from "@/lib/model/actor";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { useCliDataDir } from "@/tests/cli/cli-harness";

/**
 * `npm run -s verity -- retention …` as real processes on an embedded
 * database: a legal hold placed and listed, a task-data run that keeps a
 * task finished moments ago (its last activity is not 1 day old) and
 * reports it as JSON, a bad --days refused as usage, the hold released; the
 * log records the CLI as the actor.
 */
const { verity, withDatabase } = useCliDataDir("verity-retention-cli-");
const agent: Actor = { identity: "spiffe://verity.local/agent/refund-bot", kind: "agent" };

describe("verity retention", () => {
  it("places and releases a hold, and deletes nothing a day has not passed over", async () => {
    const placed = await verity("retention", "hold", "--task", "cli-held-task", "--reason", "claim 7");
    const holdId = /legal hold (\S+) placed/.exec(placed)?.[1];
    expect(holdId).toMatch(/^hold_/);

    const taskId = await withDatabase(async (db) => {
      const { task } = await createTask(db, { workflow: "agent-task", intent_id: "refund" }, agent);
      await transitionTask(db, task.id, { expected_version: task.version, to: "CANCELLED", reason: "done" }, agent);
      return task.id;
    });
    const run = JSON.parse(await verity("retention", "tasks", "--days", "1", "--json")) as {
      tasks: string[];
      entries: string[];
    };
    expect(run).toMatchObject({ tasks: [], entries: [] });
    await expect(verity("retention", "tasks", "--days", "0")).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--days must be a whole number of days, at least 1"),
    });

    expect(await verity("retention", "holds")).toContain(`${holdId}  task cli-held-task  "claim 7"`);
    expect(await verity("retention", "release", holdId!, "--reason", "settled")).toContain(
      `legal hold ${holdId} released`,
    );

    await withDatabase(async (db) => {
      expect(await db.task.count({ where: { id: taskId } })).toBe(1);
      const entries = await db.auditEntry.findMany({
        where: { subjectId: holdId!, action: { in: ["audit.legal_hold_placed", "audit.legal_hold_released"] } },
        orderBy: { seq: "asc" },
      });
      expect(entries.map((e) => [e.action, e.actor])).toEqual([
        ["audit.legal_hold_placed", "system:cli"],
        ["audit.legal_hold_released", "system:cli"],
      ]);
    });
  }, 300_000);
});
