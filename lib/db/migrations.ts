import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { isMarkedNonTransactional } from "@/lib/db/sql-statements";

/** The prisma/migrations folder, in Prisma's own layout (`<timestamp>_<name>/migration.sql`). */
export const projectRoot = process.cwd();
export const migrationsDir = path.join(projectRoot, "prisma", "migrations");

export interface Migration {
  /** The folder name, as `_prisma_migrations.migration_name` records it. */
  name: string;
  script: string;
  /** As Prisma computes it: sha256 of migration.sql's bytes, lower-case hex. */
  checksum: string;
  /** False for a migration whose header carries `-- verity: non-transactional` (lib/db/migrate.ts). */
  transactional: boolean;
}

export function migrationOf(name: string, script: string): Migration {
  return { name, script, checksum: checksumOf(script), transactional: !isMarkedNonTransactional(script) };
}

/** Every migration in `dir`, in name (= timestamp) order, as `prisma migrate deploy` orders them. */
export function readMigrations(dir = migrationsDir): Migration[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => migrationOf(name, readFileSync(path.join(dir, name, "migration.sql"), "utf8")));
}

export function checksumOf(script: string): string {
  return createHash("sha256").update(script, "utf8").digest("hex");
}

/**
 * Whether `script` is the one a `_prisma_migrations` row was recorded for,
 * by Prisma's own rule (schema-engine checksum.rs): the script as is, or with
 * its line endings converted either way (git may check a file out with CRLF);
 * and a 64-character checksum, or the unpadded hex an early engine wrote
 * (each byte without its leading zero).
 */
export function scriptMatchesChecksum(script: string, recorded: string): boolean {
  const variants = [script, script.replaceAll("\r\n", "\n"), script.replaceAll("\n", "\r\n")];
  return variants.some((variant) => {
    const digest = createHash("sha256").update(variant, "utf8").digest();
    const rendered =
      recorded.length === 64 || recorded === ""
        ? digest.toString("hex")
        : [...digest].map((b) => b.toString(16)).join("");
    return rendered === recorded;
  });
}
