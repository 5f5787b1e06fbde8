import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/**
 * The byte search of encryption at rest (docs/encryption.md "Tests"): where
 * a known plaintext still is, in the rows of every table and in the files of
 * an embedded database's folder. `sql` runs as the database's owner, who
 * reads every tenant's rows and may CHECKPOINT.
 */

export type OwnerSql = <T>(text: string, params?: unknown[]) => Promise<T[]>;

/** "<table> holds <needle>" for every table of the database with a row whose text holds one of `needles`. */
export async function tablesHolding(sql: OwnerSql, needles: readonly string[]): Promise<string[]> {
  const tables = await sql<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
  );
  // A search over no tables finds nothing, and would pass: the schema has dozens.
  if (tables.length <= 25) throw new Error(`only ${tables.length} tables to search`);
  const found: string[] = [];
  for (const { table_name } of tables) {
    for (const needle of needles) {
      const hits = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "${table_name}" t WHERE t::text LIKE $1`, [
        `%${needle}%`,
      ]);
      if (hits[0]!.n > 0) found.push(`${table_name} holds ${needle}`);
    }
  }
  return found;
}

/** Every file under `dir` that holds `needle` as UTF-8 bytes. CHECKPOINT first, so the pages are on disk. */
export function filesHolding(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle, "utf8");
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) found.push(...filesHolding(file, needle));
    else if (readFileSync(file).includes(bytes)) found.push(file);
  }
  return found;
}
