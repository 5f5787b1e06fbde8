/**
 * What `npm test` needs besides node_modules, brought by the test command
 * itself so that `npm install && npm test` passes on a brand-new machine:
 *
 *   Chromium     the browser tests' browser. Playwright cannot download its
 *                own here, so Debian's chromium-headless-shell is installed
 *                when missing (as root, with apt-get), or CHROMIUM_PATH names one.
 *   HAProxy      the load balancer of the scale-out test (tests/live/scale-out.test.ts:
 *                three servers behind it); Debian's package, installed when missing,
 *                or HAPROXY_PATH names one.
 *   PostgreSQL   the server the concurrency and crash tests run against, on
 *                127.0.0.1:5432 (or TEST_DATABASE_URL). A stopped cluster is
 *                started; with none, Debian's package is installed with
 *                trust auth on 127.0.0.1 and started.
 *
 * Each step says what it does; a step that cannot be done says why and what
 * to do instead, and `npm test` counts it as a failure rather than letting
 * dozens of tests fail with a less clear message.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";

export interface PrerequisiteResult {
  name: string;
  ok: boolean;
  detail: string;
}

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const hasAptGet = existsSync("/usr/bin/apt-get");
let aptUpdated = false;

function run(command: string, args: string[], env: Record<string, string> = {}): { ok: boolean; output: string } {
  const result = spawnSync(command, args, {
    encoding: "utf8",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive", ...env },
  });
  return { ok: result.status === 0, output: `${result.stdout ?? ""}${result.stderr ?? ""}`.trim() };
}

function aptInstall(pkg: string): { ok: boolean; output: string } {
  if (!aptUpdated) {
    run("apt-get", ["update", "-qq"]);
    aptUpdated = true;
  }
  return run("apt-get", ["install", "-y", "-qq", pkg]);
}

function cannotInstall(what: string, pkg: string): string {
  if (!hasAptGet) return `${what} is missing and this machine has no apt-get to install Debian's ${pkg} package`;
  return `${what} is missing and installing it needs root: run \`sudo apt-get install -y ${pkg}\` once`;
}

/**
 * The browser tests' browser: Debian's build of Chromium's headless shell, the
 * one Playwright itself runs headless tests in. Beside the full browser it
 * spent 17 % less of the machine's CPU on the same specs (docs/architecture.md,
 * Tests); playwright.config.ts launches it from here.
 */
export const defaultChromium = { path: "/usr/bin/chromium-headless-shell", aptPackage: "chromium-headless-shell" };

export function ensureChromium(): PrerequisiteResult {
  const path = process.env.CHROMIUM_PATH ?? defaultChromium.path;
  const pkg = defaultChromium.aptPackage;
  if (existsSync(path)) return { name: "chromium", ok: true, detail: `${path} is there` };
  if (process.env.CHROMIUM_PATH) return { name: "chromium", ok: false, detail: `CHROMIUM_PATH=${path} does not exist` };
  if (!isRoot || !hasAptGet)
    return { name: "chromium", ok: false, detail: cannotInstall(`Chromium's headless shell (${path})`, pkg) };
  console.log(`prerequisites: installing Debian's ${pkg} for the browser tests (once per machine)`);
  const installed = aptInstall(pkg);
  if (!installed.ok || !existsSync(path))
    return { name: "chromium", ok: false, detail: `apt-get install ${pkg} failed: ${installed.output.slice(-500)}` };
  return { name: "chromium", ok: true, detail: `installed Debian's ${pkg}` };
}

export function ensureHaproxy(): PrerequisiteResult {
  const path = process.env.HAPROXY_PATH ?? "/usr/sbin/haproxy";
  if (existsSync(path)) return { name: "haproxy", ok: true, detail: `${path} is there` };
  if (process.env.HAPROXY_PATH) return { name: "haproxy", ok: false, detail: `HAPROXY_PATH=${path} does not exist` };
  if (!isRoot || !hasAptGet)
    return { name: "haproxy", ok: false, detail: cannotInstall("HAProxy (/usr/sbin/haproxy)", "haproxy") };
  console.log("prerequisites: installing Debian's haproxy for the scale-out test (once per machine)");
  const installed = aptInstall("haproxy");
  if (!installed.ok || !existsSync(path))
    return { name: "haproxy", ok: false, detail: `apt-get install haproxy failed: ${installed.output.slice(-500)}` };
  // The package enables its own service; the test starts haproxy itself, with its own config.
  return { name: "haproxy", ok: true, detail: "installed Debian's haproxy" };
}

function isListening(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

async function waitListening(host: string, port: number, seconds: number): Promise<boolean> {
  for (let i = 0; i < seconds * 4; i++) {
    if (await isListening(host, port, 250)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

function clusterVersions(): string[] {
  return existsSync("/etc/postgresql") ? readdirSync("/etc/postgresql").sort() : [];
}

/** Trust for local TCP connections, as the test servers on these machines are set up: throwaway test databases only. */
function trustLoopback(version: string): void {
  const hba = `/etc/postgresql/${version}/main/pg_hba.conf`;
  if (!existsSync(hba)) return;
  const text = readFileSync(hba, "utf8");
  if (/^host\s+all\s+all\s+127\.0\.0\.1\/32\s+trust/m.test(text)) return;
  writeFileSync(hba, `host all all 127.0.0.1/32 trust\n${text}`);
}

export async function ensurePostgres(): Promise<PrerequisiteResult> {
  const url = new URL(process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres");
  const host = url.hostname;
  const port = Number(url.port || 5432);
  if (await isListening(host, port))
    return { name: "postgresql", ok: true, detail: `a server answers on ${host}:${port}` };
  if (process.env.TEST_DATABASE_URL)
    return { name: "postgresql", ok: false, detail: `TEST_DATABASE_URL names ${host}:${port}, where nothing answers` };
  if (!isRoot)
    return {
      name: "postgresql",
      ok: false,
      detail: cannotInstall(`A PostgreSQL server on ${host}:${port}`, "postgresql"),
    };
  let versions = clusterVersions();
  if (versions.length === 0) {
    if (!hasAptGet) return { name: "postgresql", ok: false, detail: cannotInstall("PostgreSQL", "postgresql") };
    console.log("prerequisites: installing Debian's postgresql for the server tests (once per machine)");
    const installed = aptInstall("postgresql");
    versions = clusterVersions();
    if (!installed.ok || versions.length === 0)
      return {
        name: "postgresql",
        ok: false,
        detail: `apt-get install postgresql failed: ${installed.output.slice(-500)}`,
      };
  }
  const version = versions[0]!;
  trustLoopback(version);
  console.log(`prerequisites: starting the PostgreSQL ${version} cluster`);
  const started = run("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"]);
  if (!(await waitListening(host, port, 30))) {
    return {
      name: "postgresql",
      ok: false,
      detail: `pg_ctlcluster ${version} main start did not bring up ${host}:${port}: ${started.output.slice(-500)}`,
    };
  }
  return { name: "postgresql", ok: true, detail: `started the PostgreSQL ${version} cluster` };
}

export async function ensureTestPrerequisites(): Promise<PrerequisiteResult[]> {
  return [ensureChromium(), ensureHaproxy(), await ensurePostgres()];
}
