import { PGlite } from "@electric-sql/pglite";
import { describe, expect, it } from "vitest";
import { pgliteHandle } from "@/lib/db/client";
import { migrateDatabase, readMigrations } from "@/lib/db/migrate";
import { foldTaskCountChanges, readTaskCounts } from "@/lib/stores/task-counts";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { describeTaskCounts } from "@/tests/helpers/task-counts-suite";
import { openTestPglite } from "@/tests/helpers/pglite";

describe("task counts on the embedded database", () => {
  describeTaskCounts(() => openTestPglite(), { writers: 3 });
});

describe("task counts on an upgrade", () => {
  it("count the tasks a database already had when the migration that keeps them ran", async () => {
    const migrations = readMigrations();
    const at = migrations.findIndex((m) => m.name.endsWith("_task_counts"));
    expect(at).toBeGreaterThan(0);
    const handle = pgliteHandle(new PGlite("memory://"));
    try {
      await migrateDatabase(handle.adapterFactory, { migrations: migrations.slice(0, at) });
      const { db } = handle;
      await registerBuiltInWorkflows(db);
      const agent = { identity: "spiffe://verity.test/agent/upgrader", kind: "agent" as const };
      for (let i = 0; i < 4; i++) {
        const { task } = await createTask(
          db,
          { workflow: "agent-task", intent_id: `before-${i}`, budget: { currency_committed_usd: 3 } },
          agent,
        );
        if (i % 2) await transitionTask(db, task.id, { expected_version: task.version, to: "PLANNING" }, agent);
      }
      await migrateDatabase(handle.adapterFactory, { migrations });
      const expected = [
        { workflow: "agent-task", status: "PLANNING", tasks: 2, usdSpent: 0, usdCommitted: 6, tokensSpent: 0 },
        { workflow: "agent-task", status: "RECEIVED", tasks: 2, usdSpent: 0, usdCommitted: 6, tokensSpent: 0 },
      ];
      expect(await readTaskCounts(db)).toEqual(expected);
      // Seeded into the counters themselves, not left as changes.
      expect(await foldTaskCountChanges(db)).toBe(0);
      expect(await readTaskCounts(db)).toEqual(expected);
    } finally {
      await handle.close();
    }
  }, 120_000);
});
