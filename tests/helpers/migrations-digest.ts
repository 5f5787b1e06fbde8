import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * A digest of everything that decides what a migrated test database holds:
 * the schema, every migration, and the applier with its siblings
 * (lib/db/migrate.ts …). The migrated templates (PGlite's tarball,
 * PostgreSQL's template database) carry it in their names, so a cached
 * template can never stand in for migrations it was not built from.
 */
export function migrationsDigest(extra = ""): string {
  const root = process.cwd();
  const hash = createHash("sha256");
  hash.update(extra);
  const files = [
    "prisma/schema.prisma",
    "prisma/migrations/migration_lock.toml",
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
