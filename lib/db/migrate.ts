import { readdirSync, readFileSync, existsSync } from "node:fs";
import path from "node:path";
import {
  bindMigrationAwareSqlAdapterFactory,
  DriverAdapterError,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from "@prisma/driver-adapter-utils";
import { loadSchemaEngine } from "@/lib/db/schema-engine";

const projectRoot = process.cwd();
export const schemaPath = path.join(projectRoot, "prisma", "schema.prisma");
export const migrationsDir = path.join(projectRoot, "prisma", "migrations");

/** prisma/migrations in the shape Prisma's engine expects (`prisma migrate deploy` reads the same folder). */
export function readMigrationsList() {
  const lockPath = path.join(migrationsDir, "migration_lock.toml");
  const dirs = existsSync(migrationsDir)
    ? readdirSync(migrationsDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()
    : [];
  return {
    baseDir: migrationsDir,
    lockfile: { path: "migration_lock.toml", content: existsSync(lockPath) ? readFileSync(lockPath, "utf8") : null },
    shadowDbInitScript: "",
    migrationDirectories: dirs.map((name) => ({
      path: name,
      migrationFile: {
        path: "migration.sql",
        content: { tag: "ok" as const, value: readFileSync(path.join(migrationsDir, name, "migration.sql"), "utf8") },
      },
    })),
  };
}

export function readSchemaFiles() {
  return [{ path: schemaPath, content: readFileSync(schemaPath, "utf8") }];
}

const noFilters = { externalTables: [], externalEnums: [] };

/**
 * Applies prisma/migrations exactly as `prisma migrate deploy` would (same
 * engine, same `_prisma_migrations` bookkeeping), but through the driver
 * adapter, so it needs no native binary and works on PGlite and PostgreSQL.
 * Idempotent: already-applied migrations are skipped.
 */
export async function migrateDatabase(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string[]> {
  const engine = await openEngine(adapterFactory);
  try {
    const result = await engine.applyMigrations({ migrationsList: readMigrationsList(), filters: noFilters });
    return result.appliedMigrationNames;
  } finally {
    engine.free();
  }
}

/** SQL that takes the database at `adapterFactory` to the current schema.prisma. */
export async function diffDatabaseToSchema(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string> {
  const engine = await openEngine(adapterFactory);
  try {
    const files = readSchemaFiles();
    const result = await engine.diff({
      from: { tag: "schemaDatasource", files, configDir: projectRoot },
      to: { tag: "schemaDatamodel", files },
      script: true,
      exitCode: null,
      filters: noFilters,
    });
    return result.stdout ?? "";
  } finally {
    engine.free();
  }
}

async function openEngine(adapterFactory: SqlMigrationAwareDriverAdapterFactory) {
  const bg = await loadSchemaEngine();
  const log = () => {};
  return bg.SchemaEngine.new(
    { datamodels: readSchemaFiles().map((f) => [f.path, f.content] as [string, string]) },
    log,
    bindMigrationAwareSqlAdapterFactory(withWholeScripts(adapterFactory)),
  );
}

/**
 * @prisma/adapter-pg's executeScript splits a migration at every ";", which
 * cuts a function body ($$ … ; … $$, the audit log's triggers) in pieces.
 * `prisma migrate deploy` sends each migration.sql whole; so does this: one
 * simple-protocol query, which PostgreSQL runs as one implicit transaction,
 * so a migration applies entirely or not at all. PGlite's adapter already
 * sends the script whole.
 */
function withWholeScripts(factory: SqlMigrationAwareDriverAdapterFactory): SqlMigrationAwareDriverAdapterFactory {
  if (factory.adapterName !== "@prisma/adapter-pg") return factory;
  const patch = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
    const driver = (adapter as SqlDriverAdapter & { underlyingDriver(): { query(text: string): Promise<unknown> } }).underlyingDriver();
    adapter.executeScript = async (script: string) => {
      try {
        await driver.query(script);
      } catch (error) {
        const e = error as { code?: string; severity?: string; message?: string; detail?: string; column?: string; hint?: string };
        throw new DriverAdapterError({ kind: "postgres", code: e.code ?? "", severity: e.severity ?? "ERROR", message: e.message ?? String(error), detail: e.detail, column: e.column, hint: e.hint });
      }
    };
    return adapter;
  };
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => patch(await factory.connect()),
    connectToShadowDb: async () => patch(await factory.connectToShadowDb()),
  };
}
