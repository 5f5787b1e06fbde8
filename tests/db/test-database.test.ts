import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diffDatabaseToSchema, migrateDatabase, migrationsDir } from "@/lib/db/migrate";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/** The helper every PGlite test relies on: fresh, isolated, and truly migrated. */
const migrationNames = readdirSync(migrationsDir, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

let a: TestDatabase;
let b: TestDatabase;
beforeAll(async () => {
  [a, b] = await Promise.all([openTestPglite(), openTestPglite()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe("openTestPglite", () => {
  it("records every migration in prisma/migrations as applied, as `prisma migrate deploy` would", async () => {
    const rows = await a.sql<{ migration_name: string; finished_at: Date | null; rolled_back_at: Date | null }>(
      "SELECT migration_name, finished_at, rolled_back_at FROM _prisma_migrations ORDER BY migration_name",
    );
    expect(rows.map((r) => r.migration_name)).toEqual(migrationNames);
    for (const row of rows) expect(row).toMatchObject({ finished_at: expect.any(Date), rolled_back_at: null });
    expect(await migrateDatabase(a.adapterFactory)).toEqual([]);
  });

  it("has exactly the tables and columns of prisma/schema.prisma: the migration engine finds nothing to change", async () => {
    const sql = await diffDatabaseToSchema(a.adapterFactory);
    // The engine words "no change" as a comment-only script.
    const statements = sql.split("\n").filter((line) => line.trim() !== "" && !line.trim().startsWith("--"));
    expect(statements, sql).toEqual([]);
  });

  it("starts empty and shares nothing with another test database", async () => {
    expect(await b.sql("SELECT id FROM tasks")).toEqual([]);
    const { task } = await createTask(
      a.db,
      { workflow: "agent-task", intent_id: "isolation" },
      { identity: "spiffe://t/a", kind: "agent" },
    );
    expect(await a.sql("SELECT id FROM tasks")).toEqual([{ id: task.id }]);
    expect(await b.sql("SELECT id FROM tasks")).toEqual([]);
  });

  it("is in memory: nothing is written next to the repository", () => {
    expect(readdirSync(path.dirname(migrationsDir))).not.toContain("pglite");
  });
});
