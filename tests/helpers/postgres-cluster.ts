import { execFile, execFileSync } from "node:child_process";
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";

/**
 * PostgreSQL clusters of a test's own, for what cannot be done to the
 * machine's shared server: killing it, or streaming its WAL to a standby
 * (tests/postgres/replication-failover.test.ts, docs/recovery.md). Each is
 * `initdb` into a temporary directory and `pg_ctl` on a free port, run as
 * the `postgres` OS user when the test runs as root (the server refuses to
 * run as root), listening on 127.0.0.1 with trust authentication, its socket
 * in its own directory.
 */

const run = promisify(execFile);

/** The server binaries of the installed major version: Debian's layout, else whatever is on PATH. */
function binary(name: string): string {
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = execFileSync("ls", [debian]).toString().trim().split("\n").sort();
    const dir = path.join(debian, versions.at(-1) ?? "", "bin");
    if (existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return name;
}

const asRoot = process.getuid?.() === 0;

/** Runs a server binary as the postgres user when we are root. */
async function pgRun(name: string, args: string[]): Promise<string> {
  const [command, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", binary(name), ...args]] : [binary(name), args];
  try {
    const { stdout, stderr } = await run(command, argv, { maxBuffer: 16 * 1024 * 1024 });
    return stdout + stderr;
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${name} ${args.join(" ")} failed: ${e.stderr ?? ""}${e.stdout ?? ""}${e.message}`);
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

export interface Cluster {
  name: string;
  dataDir: string;
  port: number;
  /** postgresql://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  start(): Promise<void>;
  /** A clean stop (fast mode); nothing if it is not running. */
  stop(): Promise<void>;
  /**
   * SIGKILL to the postmaster and every process it started, at once: the
   * machine lost, nothing flushed that was not already.
   */
  kill(): Promise<void>;
  promote(): Promise<void>;
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, database?: string): Promise<T[]>;
  log(): string;
  remove(): Promise<void>;
}

function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function clusterOf(name: string, root: string, dataDir: string, port: number): Cluster {
  const logFile = path.join(root, `${name}.log`);
  const url = (database = "postgres") => `postgresql://postgres@127.0.0.1:${port}/${database}`;
  const cluster: Cluster = {
    name,
    dataDir,
    port,
    url,
    async start() {
      await pgRun("pg_ctl", ["start", "-w", "-t", "120", "-D", dataDir, "-l", logFile]);
    },
    async stop() {
      if (!existsSync(path.join(dataDir, "postmaster.pid"))) return;
      await pgRun("pg_ctl", ["stop", "-w", "-m", "fast", "-D", dataDir]).catch(() => undefined);
    },
    async kill() {
      const pidFile = path.join(dataDir, "postmaster.pid");
      if (!existsSync(pidFile)) return;
      const postmaster = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
      const children = await run("pgrep", ["-P", String(postmaster)]).then(
        ({ stdout }) => stdout.split("\n").filter(Boolean).map(Number),
        () => [] as number[],
      );
      for (const pid of [postmaster, ...children]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      // Until the postmaster is gone (or a zombie nobody reaps: a container's init may not).
      for (let i = 0; i < 500 && isRunning(postmaster); i++) await new Promise((r) => setTimeout(r, 10));
      // A zombie keeps its pid, and the server refuses to start over a pid
      // file naming a live pid: what a rebooted machine would not have.
      rmSync(pidFile, { force: true });
      rmSync(path.join(root, `.s.PGSQL.${port}.lock`), { force: true });
    },
    async promote() {
      await pgRun("pg_ctl", ["promote", "-w", "-t", "120", "-D", dataDir]);
    },
    async query<T extends pg.QueryResultRow>(sql: string, database?: string) {
      const client = new pg.Client({ connectionString: url(database) });
      client.on("error", () => undefined);
      await client.connect();
      try {
        return (await client.query<T>(sql)).rows;
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : ""),
    async remove() {
      await cluster.kill();
      rmSync(root, { recursive: true, force: true });
    },
  };
  return cluster;
}

function scratchDir(prefix: string): string {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString());
    chownSync(root, uid, gid);
  }
  chmodSync(root, 0o700);
  return root;
}

function configure(dataDir: string, settings: Record<string, string | number>): void {
  const lines = Object.entries(settings).map(([k, v]) => `${k} = ${typeof v === "number" ? v : `'${v}'`}`);
  appendFileSync(path.join(dataDir, "postgresql.auto.conf"), `${lines.join("\n")}\n`);
}

/**
 * A new primary: initdb, streaming replication allowed, started. It commits
 * asynchronously until `requireSynchronousStandby` names a standby (set
 * once one streams: before that every commit would wait for it).
 */
export async function startPrimaryCluster(): Promise<Cluster> {
  const root = scratchDir("verity-primary-");
  const dataDir = path.join(root, "data");
  await pgRun("initdb", ["-D", dataDir, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  configure(dataDir, {
    port,
    listen_addresses: "127.0.0.1",
    unix_socket_directories: root,
    wal_level: "replica",
    max_wal_senders: 5,
    max_connections: 100,
    shared_buffers: "32MB",
    // WAL kept for a standby that is a moment behind.
    wal_keep_size: "256MB",
  });
  appendFileSync(path.join(dataDir, "pg_hba.conf"), "host replication postgres 127.0.0.1/32 trust\n");
  const cluster = clusterOf("primary", root, dataDir, port);
  await cluster.start();
  return cluster;
}

/**
 * A streaming standby of `primary`: pg_basebackup (-R writes its
 * primary_conninfo and standby.signal), named `applicationName` to the
 * primary (what synchronous_standby_names lists), started and streaming.
 */
export async function startStandbyCluster(primary: Cluster, applicationName: string): Promise<Cluster> {
  const root = scratchDir("verity-standby-");
  const dataDir = path.join(root, "data");
  await pgRun("pg_basebackup", [
    "-D",
    dataDir,
    "-h",
    "127.0.0.1",
    "-p",
    String(primary.port),
    "-U",
    "postgres",
    "-X",
    "stream",
    "-R",
    "--no-sync",
    // An immediate checkpoint: the default spreads it over minutes.
    "--checkpoint=fast",
  ]);
  const port = await freePort();
  configure(dataDir, {
    port,
    unix_socket_directories: root,
    primary_conninfo: `host=127.0.0.1 port=${primary.port} user=postgres application_name=${applicationName}`,
    hot_standby: "on",
    // The base backup copied the primary's settings: promoted, it must not
    // wait for a synchronous standby of its own, which nobody has set up.
    synchronous_standby_names: "",
  });
  const cluster = clusterOf("standby", root, dataDir, port);
  await cluster.start();
  // Streaming before the test goes on: the primary lists it.
  for (let i = 0; i < 600; i++) {
    const rows = await primary.query<{ state: string }>(
      `SELECT state FROM pg_stat_replication WHERE application_name = '${applicationName}'`,
    );
    if (rows[0]?.state === "streaming") return cluster;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the standby never streamed:\n${cluster.log().slice(-3000)}`);
}

/** From now on a commit on `primary` returns once `applicationName` has flushed it (or never, without that standby). */
export async function requireSynchronousStandby(primary: Cluster, applicationName: string): Promise<void> {
  await primary.query(`ALTER SYSTEM SET synchronous_standby_names = '${applicationName}'`);
  await primary.query("SELECT pg_reload_conf()");
  for (let i = 0; i < 600; i++) {
    const rows = await primary.query<{ sync_state: string }>(
      `SELECT sync_state FROM pg_stat_replication WHERE application_name = '${applicationName}'`,
    );
    if (rows[0]?.sync_state === "sync") return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${applicationName} never became synchronous`);
}

/** Back to asynchronous commits: the recovered old primary is read, and must not wait for a standby that moved on. */
export async function releaseSynchronousStandby(cluster: Cluster): Promise<void> {
  await cluster.query("ALTER SYSTEM SET synchronous_standby_names = ''");
  await cluster.query("SELECT pg_reload_conf()");
}
