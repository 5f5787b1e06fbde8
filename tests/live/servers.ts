import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { demoAgent } from "@/lib/config/demo-accounts";
import { createEmptyPostgresDatabase } from "@/tests/helpers/postgres";

/**
 * Live Verity servers for the framework suites: `npm start`'s own script
 * (scripts/start.ts: migrate, seed the demo, build when stale, serve) on a
 * fresh embedded database and on a fresh PostgreSQL database, with the demo
 * agent's token. The production build is the one the Playwright stage made
 * (start.ts rebuilds only when sources are newer). No demo agent runs.
 */
export interface LiveServer {
  name: "embedded" | "postgres";
  baseUrl: string;
  sandboxUrl: string;
  token: string;
  stop(): Promise<void>;
}

const basePort = Number(process.env.LIVE_PORT ?? 3400);

/** The ports the live suites use, from LIVE_PORT: embedded +0/+1, postgres +10/+11, the scale-out suite +20 onwards. */
export function livePort(offset: number): number {
  return basePort + offset;
}

export async function startLiveServer(name: LiveServer["name"], log: (line: string) => void): Promise<LiveServer> {
  const port = livePort(name === "embedded" ? 0 : 10);
  const sandboxPort = port + 1;
  const dataDir = `.data/live-${name}`;
  rmSync(dataDir, { recursive: true, force: true });
  const database = name === "postgres" ? await createEmptyPostgresDatabase() : null;
  let server: VerityServer;
  try {
    server = await startVerityServer({
      label: name,
      port,
      dataDir,
      env: { SANDBOX_PORT: String(sandboxPort), ...(database ? { DATABASE_URL: database.url } : {}) },
    });
  } catch (error) {
    await database?.drop().catch(() => undefined);
    throw error;
  }
  log(`live ${name} server on ${server.baseUrl}`);
  return {
    name,
    baseUrl: server.baseUrl,
    sandboxUrl: `http://127.0.0.1:${sandboxPort}`,
    token: demoAgent.token,
    stop: async () => {
      await server.stop();
      await database?.drop().catch(() => undefined);
    },
  };
}

export interface VerityServerOptions {
  /** Names the server in errors. */
  label: string;
  port: number;
  /** Emptied first. */
  dataDir: string;
  /** On top of the suites' defaults (demo data, no demo agent runs, a 1 s background loop, warn logs); DATABASE_URL picks PostgreSQL. */
  env?: Record<string, string>;
}

/** One `scripts/start.ts` process in its own process group: SIGKILL of the group is a machine lost. */
export interface VerityServer {
  label: string;
  baseUrl: string;
  /** The process group's id (start.ts, its Next server, and what they started). */
  pid: number;
  /** The last 20,000 characters it printed. */
  output(): string;
  /** SIGKILL to the whole group, as a machine that dies; resolves when start.ts has exited. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export async function startVerityServer(options: VerityServerOptions): Promise<VerityServer> {
  rmSync(options.dataDir, { recursive: true, force: true });
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The embedded server must not inherit a PostgreSQL URL from the caller's shell.
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    env: {
      ...env,
      VERITY_DATA_DIR: options.dataDir,
      PORT: String(options.port),
      VERITY_DEMO_DATA: "true",
      VERITY_DEMO_AGENT_RUNS: "false",
      VERITY_E2E_LONG_HISTORY: "0",
      VERITY_PASSWORD_SCRYPT_N: "16384",
      VERITY_RECONCILE_INTERVAL_MS: "1000",
      VERITY_LOG_LEVEL: "warn",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const baseUrl = `http://127.0.0.1:${options.port}`;
  const stop = () => stopProcessGroup(child);
  try {
    await waitForHealth(baseUrl, child, () => output);
  } catch (error) {
    await stop();
    throw new Error(`${options.label}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return {
    label: options.label,
    baseUrl,
    pid: child.pid!,
    output: () => output,
    kill: () => killProcessGroup(child),
    stop,
  };
}

async function waitForHealth(baseUrl: string, child: ChildProcess, output: () => string): Promise<void> {
  // The build, when stale, is minutes on a busy 2-core machine.
  const deadline = Date.now() + 15 * 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the server exited (${child.exitCode}) before it answered:\n${output().slice(-4000)}`);
    try {
      const res = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the server did not answer on ${baseUrl} within 15 minutes:\n${output().slice(-4000)}`);
}

async function killProcessGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid, "SIGKILL");
  await exited;
}

async function stopProcessGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // gone
    }
  }, 10_000);
  await exited;
  clearTimeout(timer);
}
