import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { migrateDatabase } from "@/lib/db/migrate";
import { migrationsDigest } from "./migrations-digest";

/**
 * A migrated PGlite data folder as a tarball, built once and loaded by every
 * test file. Opening a fresh PGlite runs initdb in WebAssembly (~10 s on the
 * 2-core machines) and the migration engine adds more; loading a tarball of
 * the result takes about one second.
 *
 * The file name carries a digest of everything that decides its contents
 * (./migrations-digest.ts, and the PGlite version), so a cached tarball can
 * never stand in for a schema it was not built from.
 */
const root = process.cwd();
const cacheDir = path.join(root, "node_modules", ".cache", "verity-tests");

function templateKey(): string {
  const require = createRequire(import.meta.url);
  const pglitePkg = JSON.parse(
    readFileSync(path.join(path.dirname(require.resolve("@electric-sql/pglite")), "..", "package.json"), "utf8"),
  ) as { version: string };
  return migrationsDigest(`pglite ${pglitePkg.version}\n`);
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
