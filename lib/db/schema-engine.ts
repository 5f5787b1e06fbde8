import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import {
  bindMigrationAwareSqlAdapterFactory,
  DriverAdapterError,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from "@prisma/driver-adapter-utils";
import * as bg from "@prisma/schema-engine-wasm/schema_engine_bg";
import { migrationsDir, projectRoot, readMigrations, type Migration } from "@/lib/db/migrations";

/**
 * Prisma's schema engine compiled to WebAssembly. Its package entry imports a
 * .wasm file directly, which Node 20 refuses, so we instantiate the module
 * ourselves (see ../shared/STACK.md). Loaded once per process.
 *
 * Verity uses it for `diff` (scripts/db-new-migration.ts writes a migration
 * from it). Migrations are applied by lib/db/migrate.ts, not by the engine's
 * applyMigrations: that records a migration as started, runs it, then marks
 * it finished in separate steps, so a process killed between them leaves a
 * row that fails every later start (P3009). applyMigrationsWithPrismaEngine
 * stays for the tests that check both write the same `_prisma_migrations`.
 */
let loaded: Promise<typeof bg> | undefined;

export function loadSchemaEngine(): Promise<typeof bg> {
  loaded ??= (async () => {
    const require = createRequire(import.meta.url);
    // The package exports no ./package.json; resolve a file it does export.
    const pkgDir = path.dirname(require.resolve("@prisma/schema-engine-wasm/schema_engine_bg"));
    const bytes = await readFile(path.join(pkgDir, "schema_engine_bg.wasm"));
    const { instance } = await WebAssembly.instantiate(bytes, {
      "./schema_engine_bg.js": bg as unknown as WebAssembly.ModuleImports,
    });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return bg;
  })();
  return loaded;
}

export const schemaPath = path.join(projectRoot, "prisma", "schema.prisma");

export function readSchemaFiles() {
  return [{ path: schemaPath, content: readFileSync(schemaPath, "utf8") }];
}

/** Migrations in the shape Prisma's engine expects (`prisma migrate deploy` reads the same folder). */
export function migrationsListOf(migrations: readonly Migration[] = readMigrations()) {
  const lockPath = path.join(migrationsDir, "migration_lock.toml");
  return {
    baseDir: migrationsDir,
    lockfile: { path: "migration_lock.toml", content: existsSync(lockPath) ? readFileSync(lockPath, "utf8") : null },
    shadowDbInitScript: "",
    migrationDirectories: migrations.map((m) => ({
      path: m.name,
      migrationFile: { path: "migration.sql", content: { tag: "ok" as const, value: m.script } },
    })),
  };
}

const noFilters = { externalTables: [], externalEnums: [] };

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

/**
 * Prisma's own apply (what `prisma migrate deploy` runs), for compatibility
 * tests only: it is not crash-safe (see the top of this file). On PostgreSQL
 * it leaves Prisma's advisory lock held by the pooled connection it used:
 * close that pool afterwards, or the next applier waits for it.
 */
export async function applyMigrationsWithPrismaEngine(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  migrations?: readonly Migration[],
): Promise<string[]> {
  const engine = await openEngine(adapterFactory);
  try {
    const result = await engine.applyMigrations({ migrationsList: migrationsListOf(migrations), filters: noFilters });
    return result.appliedMigrationNames;
  } finally {
    engine.free();
  }
}

async function openEngine(adapterFactory: SqlMigrationAwareDriverAdapterFactory) {
  const engine = await loadSchemaEngine();
  const log = () => {};
  return engine.SchemaEngine.new(
    { datamodels: readSchemaFiles().map((f) => [f.path, f.content] as [string, string]) },
    log,
    bindMigrationAwareSqlAdapterFactory(withWholeScripts(adapterFactory)),
  );
}

/**
 * @prisma/adapter-pg's executeScript splits a migration at every ";", which
 * cuts a function body ($$ … ; … $$, the audit log's triggers) in pieces.
 * `prisma migrate deploy` sends each migration.sql whole; so does this: one
 * simple-protocol query, which PostgreSQL runs as one implicit transaction.
 * PGlite's adapter already sends the script whole.
 */
function withWholeScripts(factory: SqlMigrationAwareDriverAdapterFactory): SqlMigrationAwareDriverAdapterFactory {
  if (factory.adapterName !== "@prisma/adapter-pg") return factory;
  const patch = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
    const driver = (
      adapter as SqlDriverAdapter & { underlyingDriver(): { query(text: string): Promise<unknown> } }
    ).underlyingDriver();
    adapter.executeScript = async (script: string) => {
      try {
        await driver.query(script);
      } catch (error) {
        const e = error as {
          code?: string;
          severity?: string;
          message?: string;
          detail?: string;
          column?: string;
          hint?: string;
        };
        throw new DriverAdapterError({
          kind: "postgres",
          code: e.code ?? "",
          severity: e.severity ?? "ERROR",
          message: e.message ?? String(error),
          detail: e.detail,
          column: e.column,
          hint: e.hint,
        });
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
