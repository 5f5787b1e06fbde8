import { randomUUID } from "node:crypto";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { readMigrations, scriptMatchesChecksum, type Migration } from "@/lib/db/migrations";
import { sqlStateOf, withAdvisoryLock, type SqlSession } from "@/lib/db/sql-session";
import {
  isStrictCreate,
  isTransactionControl,
  NON_TRANSACTIONAL_MARKER,
  splitSqlStatements,
  stripLeadingComments,
} from "@/lib/db/sql-statements";

export { migrationsDir, readMigrations, type Migration } from "@/lib/db/migrations";
export { diffDatabaseToSchema } from "@/lib/db/schema-engine";

/**
 * Applies prisma/migrations so that a process killed at any instant leaves
 * the database at a version it had, never between two.
 *
 * - **One transaction per migration**, holding its script and its
 *   `_prisma_migrations` row (PostgreSQL and PGlite both have transactional
 *   DDL). Killed before the COMMIT, the database is still at the previous
 *   version and the next start applies the migration again; after it, the
 *   migration is applied and recorded.
 * - **Prisma's bookkeeping, unchanged**: the table `prisma migrate deploy`
 *   creates, and for each migration the row it writes (a uuid id, the sha256
 *   hex of migration.sql as checksum, started_at, finished_at, logs NULL,
 *   applied_steps_count 1), so the stock CLI on a connected machine sees the
 *   same history and applies nothing twice.
 * - **One applier at a time**: Prisma's own advisory lock (72707369) on the
 *   connection that applies, so two starting servers, or this and `prisma
 *   migrate deploy`, never apply the same migration at once. A dead process's
 *   lock goes with its connection.
 * - **Refusals, before anything is changed**: a migration whose checksum no
 *   longer matches its recorded row (someone edited an applied migration: the
 *   databases that applied the old text and the new one would differ
 *   silently), a script with its own BEGIN/COMMIT (a COMMIT inside our
 *   transaction would commit half a migration without its row), and tables
 *   without a history (a database these migrations did not build; Prisma's
 *   P3005).
 * - **Rows the Prisma engine left unfinished** (finished_at and
 *   rolled_back_at NULL: an earlier Verity, which applied through the engine,
 *   was killed mid-migration; the cause of P3009) are settled on the next
 *   start, see settleUnfinished.
 * - **Non-transactional migrations** (CREATE INDEX CONCURRENTLY cannot run in
 *   a transaction) carry `-- verity: non-transactional` in their header. Each
 *   statement then runs on its own, and the row is written after the last:
 *   killed before that, the whole script runs again on the next start, so
 *   such a script must be idempotent (`DROP INDEX CONCURRENTLY IF EXISTS x;
 *   CREATE INDEX CONCURRENTLY x …`: an interrupted CONCURRENTLY build leaves
 *   an invalid index that `IF NOT EXISTS` alone would keep).
 */

/** Prisma's lock id (schema-engine, postgres flavour): serializes with `prisma migrate` itself. */
export const MIGRATION_LOCK_KEY = 72707369;

/**
 * A named moment of the applier, for tests that kill the process there
 * (tests/startup/): `migrate:locked`, `migrate:table`,
 * `migrate:before:<name>`, `migrate:inside:<name>` (script run and row
 * written, not committed), `migrate:after:<name>`, `migrate:statement:<name>:<n>`
 * (non-transactional), `migrate:settled:<name>` (an unfinished row settled, not committed).
 */
export type FaultPointHook = (point: string) => void | Promise<void>;

export interface MigrateOptions {
  /** Default: every migration in prisma/migrations. */
  migrations?: readonly Migration[];
  faultPoint?: FaultPointHook;
  log?: (line: string) => void;
}

export class MigrationError extends Error {
  override name = "MigrationError";
}

/** The columns and types `prisma migrate deploy` creates (schema-engine, postgres flavour). */
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface HistoryRow {
  id: string;
  checksum: string;
  migration_name: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  logs: string | null;
}

/** Applies the migrations not yet applied, in order; returns their names. Idempotent. */
export async function migrateDatabase(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  options: MigrateOptions = {},
): Promise<string[]> {
  const migrations = options.migrations ?? readMigrations();
  refuseTransactionControl(migrations);
  const fault = options.faultPoint ?? (() => {});
  const log = options.log ?? (() => {});
  return withAdvisoryLock(
    adapterFactory,
    MIGRATION_LOCK_KEY,
    async (session) => {
      await fault("migrate:locked");
      await ensureHistoryTable(session);
      await fault("migrate:table");
      const history = await session.query<HistoryRow>(
        `SELECT id, checksum, migration_name, finished_at, rolled_back_at, logs FROM "_prisma_migrations" WHERE rolled_back_at IS NULL ORDER BY started_at, id`,
      );
      const pending = planPending(migrations, history);
      const applied: string[] = [];
      for (const { migration, unfinished } of pending) {
        await fault(`migrate:before:${migration.name}`);
        if (unfinished.length) await settleUnfinished(session, migration, unfinished, fault, log);
        else if (migration.transactional) await applyInTransaction(session, migration, fault);
        else await applyStatementByStatement(session, migration, fault);
        await fault(`migrate:after:${migration.name}`);
        applied.push(migration.name);
      }
      return applied;
    },
    () => log("waiting for another process's migration lock (pg_advisory_lock 72707369)"),
  );
}

function refuseTransactionControl(migrations: readonly Migration[]): void {
  for (const m of migrations) {
    const control = splitSqlStatements(m.script).find(isTransactionControl);
    if (control) {
      throw new MigrationError(
        `Migration ${m.name} has its own transaction control (${firstLine(control)}): each migration already runs in one transaction with its record, ` +
          `and a COMMIT inside it would record half a migration. Remove the BEGIN/COMMIT lines (or, for statements that cannot run in a transaction, ` +
          `mark the migration "${NON_TRANSACTIONAL_MARKER}" and make it idempotent).`,
      );
    }
  }
}

async function ensureHistoryTable(session: SqlSession): Promise<void> {
  const [row] = await session.query<{ history: boolean; tables: number }>(
    `SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS history,
            (SELECT count(*)::int FROM pg_tables WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations') AS tables`,
  );
  if (row?.history) return;
  if (row && row.tables > 0) {
    throw new MigrationError(
      `The database schema "${await currentSchema(session)}" has ${row.tables} table(s) but no _prisma_migrations history: these migrations did not build it (Prisma's P3005). ` +
        "Point DATABASE_URL at an empty database, or baseline this one with `prisma migrate resolve --applied <migration>`.",
    );
  }
  await session.exec(CREATE_MIGRATIONS_TABLE);
}

async function currentSchema(session: SqlSession): Promise<string> {
  return (await session.query<{ schema: string }>("SELECT current_schema() AS schema"))[0]?.schema ?? "public";
}

/** The migrations still to apply, each with the unfinished rows it left; refuses a changed checksum first. */
function planPending(
  migrations: readonly Migration[],
  history: readonly HistoryRow[],
): Array<{ migration: Migration; unfinished: HistoryRow[] }> {
  const pending: Array<{ migration: Migration; unfinished: HistoryRow[] }> = [];
  for (const migration of migrations) {
    const rows = history.filter((r) => r.migration_name === migration.name);
    const finished = rows.filter((r) => r.finished_at !== null);
    if (finished.length) {
      const changed = finished.find((r) => !scriptMatchesChecksum(migration.script, r.checksum));
      if (changed) {
        throw new MigrationError(
          `Migration ${migration.name} was changed after it was applied: its migration.sql has checksum ${migration.checksum}, the database recorded ${changed.checksum}. ` +
            "An applied migration must never change (databases that applied the old text would silently differ): restore the applied text and put the change in a new migration.",
        );
      }
      continue;
    }
    pending.push({ migration, unfinished: rows });
  }
  return pending;
}

async function recordApplied(session: SqlSession, m: Migration, startedAt: Date): Promise<void> {
  // What the engine's record_migration_started + record_successful_step +
  // record_migration_finished leave, in one row written once.
  await session.query(
    `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, logs, applied_steps_count)
     VALUES ($1, $2, $3, $4, clock_timestamp(), NULL, 1)`,
    [randomUUID(), m.checksum, m.name, startedAt],
  );
}

async function applyInTransaction(session: SqlSession, m: Migration, fault: FaultPointHook): Promise<void> {
  const startedAt = new Date();
  await inTransaction(session, async () => {
    await runScript(session, m);
    await recordApplied(session, m, startedAt);
    await fault(`migrate:inside:${m.name}`);
  });
}

async function applyStatementByStatement(session: SqlSession, m: Migration, fault: FaultPointHook): Promise<void> {
  const startedAt = new Date();
  const statements = splitSqlStatements(m.script);
  for (const [i, statement] of statements.entries()) {
    try {
      await session.exec(statement);
    } catch (error) {
      throw new MigrationError(
        `Migration ${m.name} (${NON_TRANSACTIONAL_MARKER}) failed at statement ${i + 1} of ${statements.length}: ${messageOf(error)}. It runs whole again on the next start.`,
        { cause: error },
      );
    }
    await fault(`migrate:statement:${m.name}:${i + 1}`);
  }
  await recordApplied(session, m, startedAt);
}

async function runScript(session: SqlSession, m: Migration): Promise<void> {
  try {
    await session.exec(m.script);
  } catch (error) {
    throw new MigrationError(
      `Migration ${m.name} failed and was rolled back, nothing of it applied: ${messageOf(error)}`,
      { cause: error },
    );
  }
}

async function inTransaction(session: SqlSession, work: () => Promise<void>): Promise<void> {
  await session.exec("BEGIN");
  try {
    await work();
  } catch (error) {
    await session.exec("ROLLBACK").catch(() => {});
    throw error;
  }
  await session.exec("COMMIT");
}

/** Re-running a schema script that was applied fails with one of these: its objects exist (or, for a DROP, are gone). */
const alreadyThereStates = new Set([
  "42P07", // duplicate_table (tables, indexes, sequences, views)
  "42710", // duplicate_object (types, constraints, triggers)
  "42701", // duplicate_column
  "42P06", // duplicate_schema
  "42723", // duplicate_function
  "42704", // undefined_object (DROP INDEX / TYPE / CONSTRAINT of an object the script dropped)
  "42P01", // undefined_table
  "42703", // undefined_column
  "42883", // undefined_function
]);

/**
 * A migration with rows the Prisma engine recorded as started and never
 * finished. The engine wrote that row in its own statement, then sent the
 * script as ONE simple-protocol query (lib/db/schema-engine.ts, and PGlite's
 * exec), which PostgreSQL runs as one implicit transaction; then it marked
 * the row finished. So the script either committed whole or not at all, and
 * which of the two is decided here, in one transaction:
 *
 * 1. The script runs again. If it succeeds, it had not been applied: a
 *    schema migration that had been applied fails on its first CREATE (the
 *    only other way to succeed is an idempotent script, for which running it
 *    again changes nothing). Kept, and recorded.
 * 2. If it fails with "already exists" (or, for a DROP, "does not exist"),
 *    that is only the hypothesis that it was applied; it is confirmed
 *    statement by statement, each under a savepoint and rolled back: in a
 *    database that holds the script's result, no statement that creates an
 *    object without IF NOT EXISTS can succeed. One that does means part of the
 *    script is missing: not a state the atomic script can leave, so nothing is
 *    guessed and the start is refused for an operator (`prisma migrate resolve`).
 * 3. Any other error: refused the same way, with the database's message.
 *
 * Either conclusion is recorded as Prisma's `migrate resolve` would: the
 * unfinished rows get rolled_back_at, and a new row records the migration
 * (applied here: as deploy writes it; found applied: as `resolve --applied`
 * writes it, logs '' and applied_steps_count 0).
 */
async function settleUnfinished(
  session: SqlSession,
  m: Migration,
  unfinished: readonly HistoryRow[],
  fault: FaultPointHook,
  log: (line: string) => void,
): Promise<void> {
  const startedAt = new Date();
  // A non-transactional migration is idempotent by contract (see the top of
  // this file): running it whole settles it, whichever way it went before.
  if (!m.transactional) for (const statement of splitSqlStatements(m.script)) await session.exec(statement);
  let outcome: "applied now" | "found applied" = "applied now";
  await inTransaction(session, async () => {
    if (m.transactional) {
      await session.exec("SAVEPOINT verity_settle");
      try {
        await session.exec(m.script);
      } catch (error) {
        await session.exec("ROLLBACK TO SAVEPOINT verity_settle");
        const state = sqlStateOf(error);
        if (!state || !alreadyThereStates.has(state))
          throw unsettled(m, `running it again failed with ${state ?? "an error"}: ${messageOf(error)}`, error);
        await confirmApplied(session, m);
        outcome = "found applied";
      }
    }
    await session.query(`UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE id = ANY($1::text[])`, [
      unfinished.map((r) => r.id),
    ]);
    if (outcome === "applied now") {
      await recordApplied(session, m, startedAt);
    } else {
      await session.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, logs, applied_steps_count) VALUES ($1, $2, $3, now(), now(), '', 0)`,
        [randomUUID(), m.checksum, m.name],
      );
    }
    await fault(`migrate:settled:${m.name}`);
  });
  log(
    `migration ${m.name} had been left unfinished by an interrupted start: ${outcome === "applied now" ? "it had not been applied; applied it now" : "it had been applied; recorded it as applied"}`,
  );
}

async function confirmApplied(session: SqlSession, m: Migration): Promise<void> {
  for (const [i, statement] of splitSqlStatements(m.script).entries()) {
    await session.exec("SAVEPOINT verity_statement");
    let succeeded = false;
    try {
      await session.exec(statement);
      succeeded = true;
    } catch (error) {
      const state = sqlStateOf(error);
      if (!state || !alreadyThereStates.has(state)) {
        await session.exec("ROLLBACK TO SAVEPOINT verity_statement");
        throw unsettled(m, `statement ${i + 1} failed with ${state ?? "an error"}: ${messageOf(error)}`, error);
      }
    }
    await session.exec("ROLLBACK TO SAVEPOINT verity_statement");
    if (succeeded && isStrictCreate(statement)) {
      throw unsettled(
        m,
        `it failed as if applied, yet statement ${i + 1} (${firstLine(statement)}) creates an object that does not exist: the database holds part of it`,
      );
    }
  }
}

function unsettled(m: Migration, why: string, cause?: unknown): MigrationError {
  return new MigrationError(
    `Migration ${m.name} was left unfinished by an interrupted start, and whether it was applied cannot be told safely (${why}). ` +
      `Compare the database with prisma/migrations/${m.name}/migration.sql, then run \`prisma migrate resolve --applied ${m.name}\` or \`--rolled-back ${m.name}\`.`,
    { cause },
  );
}

function firstLine(statement: string): string {
  return stripLeadingComments(statement).split("\n")[0]!;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
