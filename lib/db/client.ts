import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { type Prisma, PrismaClient } from "@/lib/generated/prisma/client";
import { getEnv, type Env } from "@/lib/config/env";
import { childLogger } from "@/lib/config/log";
import { assertTenantId, DEFAULT_TENANT_ID, scopedPglite, tenantConnectionOptions } from "@/lib/db/tenant-sessions";
import { AppError } from "@/lib/core/errors";
import {
  listenInProcess,
  readLiveAnnouncements,
  listenOnPostgres,
  type ChangeListener,
  type ChangeListenerHandlers,
} from "@/lib/db/notifications";

export type Db = PrismaClient;
/** A Prisma transaction client: helpers that may join a transaction take one. */
export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

export type DatabaseTarget = Env["database"];

interface ProcessWideState {
  connectionTenants: WeakMap<object, string | null>;
  directPools: WeakMap<object, pg.Pool>;
  preparedNames: Map<string, string>;
  transactionConnections: WeakMap<object, pg.PoolClient>;
}

/**
 * What this module knows about the process's one database handle, kept on
 * `globalThis` like the handle itself (globalForDb below). Next builds this
 * module into more than one bundle of the same server: the API router is
 * built from instrumentation.ts, the pages and routes from the app. Each
 * copy had its own maps, so a copy that had not opened the handle found no
 * pool under it, and every hot-path statement it ran (the API's CAS, the
 * ledger's moves) went through Prisma's query layer unprepared: correct,
 * and slower (docs/benchmarks.md, "The API's statements prepared again").
 */
function processWide(): ProcessWideState {
  const key = Symbol.for("verity.db.client");
  const slot = globalThis as unknown as Record<symbol, ProcessWideState | undefined>;
  slot[key] ??= {
    connectionTenants: new WeakMap(),
    directPools: new WeakMap(),
    preparedNames: new Map(),
    transactionConnections: new WeakMap(),
  };
  return slot[key];
}

/**
 * Every client is built here. Interactive transactions get generous limits:
 * Prisma's 5 s default aborted correct transactions on a loaded 2-core
 * machine (seen in the chaos test), and correctness never depends on the
 * timeout — the version checks and row locks in PostgreSQL do.
 */
export function newPrismaClient(adapter: PrismaPg | PrismaPGlite): PrismaClient {
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 15_000, timeout: 60_000 } });
}

/**
 * What each client and transaction client was found to run as. A client's
 * setting is its pool's (or PGlite session's) for its whole life; a
 * transaction's can change only through writeAsTenant
 * (lib/stores/tenants.ts), which says so here (noteTransactionTenant). Asking
 * the database once per call was a round trip of its own, several per
 * ledger step (issue 16: three in an intent, four in an outcome).
 */
const connectionTenants = processWide().connectionTenants;

export interface DatabaseHandle {
  /** The first tenant's client (DEFAULT_TENANT_ID): what a single-tenant deployment, the demo and most tests use. */
  db: PrismaClient;
  /** A client whose every statement is the tenant's, under row-level security (one per tenant, kept). */
  forTenant(tenantId: string): PrismaClient;
  /** The owner's client, not subject to row-level security: the platform's lookups and registers only. */
  platformDb: PrismaClient;
  /** The owner's driver adapter factory, for the migration engine. */
  adapterFactory: PrismaPg | PrismaPGlite;
  /**
   * Listens to the change announcements (lib/db/notifications.ts): on
   * PostgreSQL on a connection of its own, outside the pools, reopened when
   * lost; on the embedded database on its one session.
   */
  listenForChanges(handlers: ChangeListenerHandlers): ChangeListener;
  close(): Promise<void>;
}

/**
 * The one place a PrismaClient is built. The app uses the singleton below;
 * scripts and tests that need their own connection (a second process, a
 * throwaway database) call this directly. Tenants' clients are made on
 * first use (after the migrations that create their role have run).
 */
export function openDatabase(target: DatabaseTarget, options: { poolSize?: number } = {}): DatabaseHandle {
  if (target.kind === "postgres") {
    const pools: pg.Pool[] = [];
    // The pools are ours, not the adapter's, so that the hot path can reach them (directQuery below).
    const newPool = (connectionOptions?: string) => {
      const pool = new pg.Pool({
        connectionString: target.url,
        max: options.poolSize ?? 10,
        options: connectionOptions,
        // Pipeline mode: a statement is written as soon as it is asked for, not after the one before it has
        // answered. Statements awaited one by one behave as before; the ones a ledger step asks for together
        // (inOrder, below) leave in one write and cost one round trip.
        pipeline: true,
      } as pg.PoolConfig);
      // An idle connection the server closed (a restart, pg_terminate_backend) is
      // dropped by the pool and replaced on demand; without a listener, node
      // would treat the event as an uncaught error and stop the process.
      pool.on("error", (error) => logConnectionFailure(error, "an idle database connection failed and was dropped"));
      pools.push(pool);
      return pool;
    };
    const ownerPool = newPool();
    const adapterFactory = new PrismaPg(ownerPool);
    const platformDb = newPrismaClient(adapterFactory);
    directPools.set(platformDb, ownerPool);
    const forTenant = tenantClients((tenantId) => {
      const pool = newPool(tenantConnectionOptions(tenantId));
      const db = newPrismaClient(new PrismaPg(pool));
      directPools.set(db, pool);
      return db;
    });
    connectionTenants.set(platformDb, null);
    return {
      get db() {
        return forTenant(DEFAULT_TENANT_ID);
      },
      forTenant,
      platformDb,
      adapterFactory,
      listenForChanges: (handlers) => listenOnPostgres(target.url, handlers),
      close: async () => {
        await Promise.all([platformDb, ...forTenant.opened()].map((db) => db.$disconnect()));
        await Promise.all(pools.map(endPool));
      },
    };
  }
  // PGlite does not create the parent of its data folder ("memory://" is an in-memory database).
  if (!target.dir.startsWith("memory://")) mkdirSync(target.dir, { recursive: true });
  return pgliteHandle(new PGlite(target.dir));
}

/** A failed connection's error, logged by what it says, not what it holds (its pg client: sockets, statements). */
function logConnectionFailure(error: Error, what: string): void {
  childLogger("db").warn({ code: (error as { code?: string }).code, reason: error.message }, what);
}

/**
 * Ends a pool and waits until each of its connections is closed. pg-pool's
 * `end()` resolves once it has let go of its clients, before their sockets
 * have said goodbye: a database dropped WITH (FORCE) right after (a test's or
 * a benchmark's throwaway one) then terminated connections still closing
 * (bench:transitions died at teardown on such an 'error', issue 16). Each
 * closed client is a 'remove' event; a bounded wait, so a connection that
 * never answers cannot hold a shutdown forever.
 */
async function endPool(pool: pg.Pool): Promise<void> {
  const open = pool.totalCount;
  let closed = 0;
  let timer: NodeJS.Timeout | undefined;
  const allClosed = new Promise<void>((resolve) => {
    if (open === 0) return resolve();
    pool.on("remove", () => {
      if (++closed >= open) resolve();
    });
    timer = setTimeout(resolve, 5_000);
    timer.unref();
  });
  await pool.end();
  await allClosed;
  clearTimeout(timer);
}

/**
 * The handle over an open PGlite (a data folder, or a test's database loaded
 * from a tarball): the owner's client and adapter on its owner session, and
 * a tenant's client on that tenant's session, all sharing its one queue.
 */
export function pgliteHandle(pglite: PGlite): DatabaseHandle & { adapterFactory: PrismaPGlite } {
  const sessions = scopedPglite(pglite);
  const adapterFactory = new PrismaPGlite(sessions.owner as PGlite);
  const platformDb = newPrismaClient(adapterFactory);
  const forTenant = tenantClients((tenantId) => newPrismaClient(new PrismaPGlite(sessions.tenant(tenantId) as PGlite)));
  connectionTenants.set(platformDb, null);
  return {
    get db() {
      return forTenant(DEFAULT_TENANT_ID);
    },
    forTenant,
    platformDb,
    adapterFactory,
    listenForChanges: (handlers) => listenInProcess(sessions, handlers, () => readLiveAnnouncements(platformDb)),
    close: async () => {
      await Promise.all([platformDb, ...forTenant.opened()].map((db) => db.$disconnect()));
      await pglite.close();
    },
  };
}

/** One client per tenant, made on first use and kept. */
function tenantClients(open: (tenantId: string) => PrismaClient) {
  const clients = new Map<string, PrismaClient>();
  const forTenant = (tenantId: string): PrismaClient => {
    let db = clients.get(tenantId);
    if (!db) {
      db = open(assertTenantId(tenantId));
      // Its connections run as the tenant for the client's whole life (tenantConnectionOptions, scopedPglite).
      connectionTenants.set(db, tenantId);
      clients.set(tenantId, db);
    }
    return db;
  };
  return Object.assign(forTenant, { opened: () => [...clients.values()] });
}

/** The node-postgres pool behind each PostgreSQL client (never a PGlite one). */
const directPools = processWide().directPools;

/**
 * Runs one statement straight on the node-postgres pool behind `db`, without
 * Prisma's query layer: for the two statements of the transition hot path,
 * where that layer cost about 0.3 ms of client CPU each, a third of a
 * transition (docs/benchmarks.md). The statement is the same `Prisma.sql`
 * either way. A top-level PostgreSQL client takes the direct path on its
 * pool, a transaction of transactionOn on that transaction's own connection;
 * any other transaction client, and PGlite (one connection, which a Prisma
 * transaction may be holding), go through Prisma. Rows come back as node-postgres parses them by default (jsonb as
 * objects, timestamptz as Date, int4 as number), as Prisma's raw queries do.
 */
export async function directQuery<T>(
  db: Db | Tx,
  statement: Prisma.Sql,
  options: { prepare?: string } = {},
): Promise<T[]> {
  const target = directPools.get(db as PrismaClient) ?? transactionConnections.get(db);
  if (!target) return (db as Db).$queryRaw<T[]>(statement);
  const text = statement.text;
  const name = options.prepare ? preparedName(options.prepare, text) : undefined;
  if (target instanceof pg.Pool) {
    const result = await target.query({ name, text, values: statement.values as unknown[] });
    return result.rows as T[];
  }
  corkForThisTick(target);
  const result = await target.query({ name, text, values: statement.values as unknown[] });
  return result.rows as T[];
}

const corkedConnections = new WeakSet<pg.PoolClient>();

/**
 * The statements a transaction asks for in one go (several directQuery calls
 * before any of them is awaited: inOrder) leave in one write: the
 * connection's socket is corked until the current tick's work is done. A
 * statement awaited on its own is written at the end of its tick, as before.
 */
function corkForThisTick(client: pg.PoolClient): void {
  const stream = (client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection
    ?.stream;
  if (!stream?.cork || !stream.uncork || corkedConnections.has(client)) return;
  stream.cork();
  corkedConnections.add(client);
  process.nextTick(() => {
    corkedConnections.delete(client);
    stream.uncork!();
  });
}

/**
 * A statement (or step) asked for now and awaited after more are asked for
 * (inOrder's callers): its failure, if it lands first, is not reported as
 * unhandled meanwhile; whoever awaits the promise still gets it.
 */
export function awaitedLater<T>(answer: Promise<T>): Promise<T> {
  answer.catch(() => undefined);
  return answer;
}

/**
 * Waits for statements (or steps) that were started together, in one
 * transaction, and answers as if they had run one after the other: their
 * values in order, or the error of the first that failed, in the order
 * given, whichever failed first in time. With pipeline mode the statements
 * go out together and PostgreSQL runs them in the order they were asked
 * for, so a lock taken by an earlier one holds for the later ones, as when
 * each was awaited in turn; only the round trips between them are saved.
 * Start them in the order they must run.
 */
export async function inOrder<T extends readonly unknown[]>(steps: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(steps);
  const values: unknown[] = [];
  for (const outcome of settled) {
    if (outcome.status === "rejected") throw outcome.reason;
    values.push(outcome.value);
  }
  return values as unknown as T;
}

const preparedNames = processWide().preparedNames;

/**
 * A named prepared statement per distinct text: each connection parses and
 * plans it once instead of on every call. The name covers the text, so two
 * shapes of one statement never share a plan. (Behind a pooler in
 * transaction mode, e.g. PgBouncer before 1.21, named statements do not
 * survive; run without it or with its prepared-statement support.)
 */
function preparedName(label: string, text: string): string {
  let name = preparedNames.get(text);
  if (!name) {
    name = `verity_${label}_${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
    preparedNames.set(text, name);
  }
  return name;
}

const globalForDb = globalThis as unknown as { verityDb?: DatabaseHandle };

/** The process-wide handle, built from the validated config on first use. */
function processDatabase(): DatabaseHandle {
  if (!globalForDb.verityDb) {
    const env = getEnv();
    const handle = openDatabase(env.database, { poolSize: env.VERITY_DB_POOL_SIZE });
    globalForDb.verityDb = handle;
    // A PGlite instance whose open failed stays failed: forget it so the next
    // request tries again instead of failing forever.
    handle.platformDb.$connect().catch(() => {
      if (globalForDb.verityDb === handle) globalForDb.verityDb = undefined;
    });
  }
  return globalForDb.verityDb;
}

/** The first tenant's client: for the demo, single-tenant tools and the background work not yet per tenant. */
export function getDb(): PrismaClient {
  return processDatabase().db;
}

/** The client of a caller's tenant: every statement made for them runs as that tenant, under row-level security. */
export function dbFor(caller: { tenantId: string }): PrismaClient {
  return processDatabase().forTenant(caller.tenantId);
}

/**
 * This process's listener of the change announcements (one per process: the
 * live updates' fan-out, lib/adapters/console/live/, holds it).
 */
export function listenForChanges(handlers: ChangeListenerHandlers): ChangeListener {
  return processDatabase().listenForChanges(handlers);
}

/** The owner's client (no row-level security): only for finding which tenant a credential belongs to, and the register. */
export function getPlatformDb(): PrismaClient {
  return processDatabase().platformDb;
}

/**
 * The tenant a client's statements run as (the connection's
 * `verity.tenant_id`), asked of the database: a transaction client does not
 * say which tenant's client it came from, and the connection is the
 * authority row-level security itself uses. The owner's connection has no
 * tenant: asking it is a programming error, refused rather than guessed.
 */
export async function tenantOfConnection(db: Db | Tx): Promise<string> {
  const tenantId = await tenantOfConnectionOrNull(db);
  if (!tenantId)
    throw new AppError(
      "invariant_violated",
      "This statement needs a tenant's connection, and ran on one with no tenant (the owner's).",
      { violations: [{ invariant: "tenant_connection", message: "no verity.tenant_id on this connection" }] },
    );
  return tenantId;
}

/** The connection's tenant, or null on the owner's connection (which has none). */
export async function tenantOfConnectionOrNull(db: Db | Tx): Promise<string | null> {
  if (connectionTenants.has(db)) return connectionTenants.get(db)!;
  const rows = await (db as Db).$queryRaw<
    Array<{ tenant_id: string | null }>
  >`SELECT verity_current_tenant() AS tenant_id`;
  const tenantId = rows[0]?.tenant_id ?? null;
  connectionTenants.set(db, tenantId);
  return tenantId;
}

/**
 * A transaction for the ledger's steps, whose transaction client knows its
 * tenant from `db` (it runs on a connection of db's pool, with db's
 * setting), so sealing and the rows' tenant ask no question of their own.
 *
 * On PostgreSQL the transaction is ours, not Prisma's: a connection of db's
 * pool, BEGIN, `fn`, COMMIT (ROLLBACK if `fn` throws). Prisma's interactive
 * transaction cost about 0.3 ms of client CPU each (its transaction manager,
 * timers and request routing: bench/effects, docs/benchmarks.md), two per
 * effect, for statements that mostly go around Prisma anyway (directQuery
 * sends them on this connection, prepared). A helper that uses Prisma's
 * query builder on `tx` still runs in the transaction: `tx` reaches a
 * Prisma client whose only connection is this one (connectionBoundClient).
 * On the embedded database, whose one connection Prisma's adapter queues,
 * it is Prisma's `$transaction`.
 */
export async function transactionOn<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const pool = directPools.get(db);
  if (!pool) return db.$transaction((tx) => fn(withTenantOf(db, tx)));
  const connection = await pool.connect();
  // A connection that fails while checked out (the server restarted, the backend was terminated) emits
  // 'error' on itself, and the pool listens only to idle ones: without a listener here that error would
  // stop the process. The statement in flight fails with it, and the step with that statement.
  const onConnectionError = (error: Error) =>
    logConnectionFailure(error, "a database connection failed during a transaction");
  connection.on("error", onConnectionError);
  const release = (failure?: Error) => {
    connection.removeListener("error", onConnectionError);
    connection.release(failure);
  };
  const transaction = { open: true };
  const tx = withTenantOf(db, transactionClient(connection, transaction));
  transactionConnections.set(tx, connection);
  // From here the transaction ends: a late statement must not follow its connection back to the pool.
  const close = () => {
    transaction.open = false;
    transactionConnections.delete(tx);
  };
  // Written with the first statement, not waited for: BEGIN cannot fail on a
  // working connection, and on a broken one the statement after it fails too.
  corkForThisTick(connection);
  connection.query("BEGIN").catch(() => undefined);
  let result: T;
  try {
    result = await fn(tx);
  } catch (error) {
    close();
    // A connection whose ROLLBACK failed is in an unknown state: closed, not pooled again.
    const rollback = await connection.query("ROLLBACK").then(
      () => undefined,
      (failure: Error) => failure,
    );
    release(rollback);
    throw error;
  }
  close();
  try {
    await connection.query("COMMIT");
  } catch (error) {
    release(error as Error);
    throw error;
  }
  release();
  return result;
}

function withTenantOf<C extends object>(db: Db, tx: C): C {
  if (connectionTenants.has(db)) connectionTenants.set(tx, connectionTenants.get(db)!);
  return tx;
}

/**
 * The node-postgres connection under each open ledger transaction
 * (transactionOn), so that directQuery sends that transaction's statements
 * on it, prepared, without Prisma's query layer.
 */
const transactionConnections = processWide().transactionConnections;

/** The Prisma client's methods a transaction client does not have (as Prisma's own). */
const notInTransaction = new Set<PropertyKey>(["$transaction", "$connect", "$disconnect", "$on", "$use", "$extends"]);

/**
 * `tx` for one transaction of transactionOn: Prisma's query builder on the
 * transaction's connection (connectionBoundClient), refused once the
 * transaction has ended, as Prisma refuses a closed transaction's client. A
 * new object per transaction, so what is noted about a transaction client
 * (its tenant, its connection) is about this transaction only.
 */
function transactionClient(connection: pg.PoolClient, transaction: { open: boolean }): Tx {
  const refuseWhenClosed = () => {
    if (!transaction.open)
      throw new Error("This transaction has ended (committed or rolled back): a statement after it cannot join it.");
  };
  const checked = (value: unknown, owner: object): unknown => {
    if (typeof value === "function")
      return (...args: unknown[]) => {
        refuseWhenClosed();
        return (value as (...a: unknown[]) => unknown).apply(owner, args);
      };
    // A model's delegate (tx.review): its methods are checked at each call, even when kept past the transaction.
    if (typeof value === "object" && value !== null)
      return new Proxy(value, { get: (target, key) => checked(Reflect.get(target, key), target) });
    return value;
  };
  return new Proxy({} as Tx, {
    get(_, key) {
      if (notInTransaction.has(key)) return undefined;
      // Symbols (util.inspect, then-ables' checks) are not statements: answered without a client.
      if (typeof key === "symbol" || key === "then") return undefined;
      refuseWhenClosed();
      const client = connectionBoundClient(connection);
      return checked(Reflect.get(client, key), client);
    },
  });
}

/**
 * A Prisma client over one pooled connection, made the first time a ledger
 * transaction on that connection uses Prisma's query builder (a frozen call's
 * review, say) and kept with the connection: making one costs tens of
 * milliseconds. Its statements go to whichever transaction holds the
 * connection, which is the caller's (transactionClient checks it is open).
 */
const boundClients = new WeakMap<pg.PoolClient, PrismaClient>();

function connectionBoundClient(connection: pg.PoolClient): PrismaClient {
  let client = boundClients.get(connection);
  if (!client) {
    client = newPrismaClient(new PrismaPg(new OneConnectionPool(connection)));
    boundClients.set(connection, client);
  }
  return client;
}

/**
 * What Prisma's pg adapter takes as its pool (it asks `instanceof pg.Pool`),
 * sending every statement on one connection it never closes, and opening no
 * transaction of its own: the transaction is transactionOn's.
 */
class OneConnectionPool extends pg.Pool {
  constructor(private readonly connection: pg.PoolClient) {
    super({ max: 0 });
  }

  override query(...args: unknown[]): never {
    return (this.connection.query as (...a: unknown[]) => never)(...args);
  }

  override connect(): never {
    throw new Error("A statement inside transactionOn cannot open a transaction of its own.");
  }

  override async end(): Promise<void> {}
}

/** The rest of transaction `tx` runs as `tenantId` (its setting was just changed: writeAsTenant). */
export function noteTransactionTenant(tx: Tx, tenantId: string): void {
  connectionTenants.set(tx, tenantId);
}
