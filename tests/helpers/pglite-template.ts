import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { migrateDatabase } from "@/lib/db/migrate";

/**
 * A migrated PGlite data folder as a tarball, built once and loaded by every
 * test file. Opening a fresh PGlite runs initdb in WebAssembly (~10 s on the
 * 2-core machines) and the migration engine adds more; loading a tarball of
 * the result takes about one second.
 *
 * The file name carries a digest of everything that decides its contents
 * (migrations, schema, the migration code, the PGlite version), so a cached
 * tarball can never stand in for a schema it was not built from.
 */
const root = process.cwd();
const cacheDir = path.join(root, "node_modules", ".cache", "verity-tests");

function templateKey(): string {
  const hash = createHash("sha256");
  const require = createRequire(import.meta.url);
  const pglitePkg = JSON.parse(
    readFileSync(path.join(path.dirname(require.resolve("@electric-sql/pglite")), "..", "package.json"), "utf8"),
  ) as { version: string };
  hash.update(`pglite ${pglitePkg.version}\n`);
  const files = [
    "prisma/schema.prisma",
    "prisma/migrations/migration_lock.toml",
    // The applier and everything it uses (lib/db/migrate.ts and its siblings).
    ...readdirSync(path.join(root, "lib", "db"))
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => `lib/db/${f}`)
      .sort(),
    ...readdirSync(path.join(root, "prisma", "migrations"), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `prisma/migrations/${d.name}/migration.sql`)
      .sort(),
  ];
  for (const file of files) {
    const full = path.join(root, file);
    hash.update(`${file}\n`);
    if (existsSync(full)) hash.update(readFileSync(full));
  }
  return hash.digest("hex").slice(0, 16);
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
