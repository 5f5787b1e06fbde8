import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { pgliteHandle } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";
import { migrationsDigest } from "./migrations-digest";

/**
 * A migrated PGlite data folder as a tarball, built once and loaded by every
 * test file. Opening a fresh PGlite runs initdb in WebAssembly (~10 s on the
 * 2-core machines) and the migration engine adds more; loading a tarball of
 * the result takes about one second.
 *
 * The file name carries a digest of everything that decides its contents
 * (./migrations-digest.ts: the schema, migrations, lib/db/ and the shipped
 * definitions; and the PGlite version), so a cached tarball can never stand
 * in for a schema or a registry it was not built from.
 *
 * Every test file opens one (about a hundred per run), so what it holds is
 * what each open pays for: the shipped workflows and tools are registered in
 * it (each open registers again, as every start does, and finds nothing to
 * write), and PostgreSQL's template0 and template1, which nothing in an
 * embedded database copies, are dropped: a third of the tarball's bytes and
 * two thirds of its files, ~0.5 s of CPU per open.
 */
const root = process.cwd();
const cacheDir = path.join(root, "node_modules", ".cache", "verity-tests");

function templateKey(): string {
  const require = createRequire(import.meta.url);
  const pglitePkg = JSON.parse(
    readFileSync(path.join(path.dirname(require.resolve("@electric-sql/pglite")), "..", "package.json"), "utf8"),
  ) as { version: string };
  // "registered, slim": what buildPgliteTemplate does besides migrating; change it when that changes.
  return migrationsDigest(`pglite ${pglitePkg.version}\nregistered, slim\n`);
}

/** Path of a tarball of a freshly initialised, fully migrated PGlite data folder. */
export async function buildPgliteTemplate(): Promise<string> {
  const file = path.join(cacheDir, `pglite-template-${templateKey()}.tar`);
  if (existsSync(file)) return file;
  const pglite = new PGlite("memory://");
  try {
    const applied = await migrateDatabase(new PrismaPGlite(pglite));
    if (applied.length === 0)
      throw new Error("migrateDatabase applied no migration to an empty PGlite: is prisma/migrations empty?");
    // As the superuser, before the app's handle takes its roles.
    await pglite.exec("UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')");
    await pglite.exec("DROP DATABASE template0");
    await pglite.exec("DROP DATABASE template1");
    const { db } = pgliteHandle(pglite);
    await registerBuiltInWorkflows(db);
    await registerBuiltInTools(db);
    await pglite.exec("RESET ROLE");
    await pglite.exec("CHECKPOINT");
    const tarball = await pglite.dumpDataDir("none");
    mkdirSync(cacheDir, { recursive: true });
    // Write then rename: two runs building at once must never read a half-written tarball.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await tarball.arrayBuffer()));
    renameSync(partial, file);
    return file;
  } finally {
    await pglite.close();
  }
}
