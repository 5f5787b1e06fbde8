/**
 * Issue 11, "First start of a real deployment", as real processes on a
 * PGlite folder: a demo database restarted with VERITY_DEMO_DATA=false is
 * refused by `npm start`'s own script (before, its demo logins and demo
 * agent token kept working), `npm run -s verity -- demo purge` takes the
 * demo accounts out, and `users create / disable` provision people that
 * sign in, or do not.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoAgent, demoUsers } from "@/lib/config/demo-accounts";
import { signInWithPassword } from "@/lib/adapters/auth/audit-trail";
import { openDatabase, type Db } from "@/lib/db/client";
import { ensureEmbeddedDataDir } from "@/lib/db/embedded-init";
import { migrateDatabase } from "@/lib/db/migrate";
import { authenticateApiToken } from "@/lib/stores/api-tokens";
import { seedDemoData } from "@/programs/seed/seed";

const root = path.resolve(import.meta.dirname, "..", "..");
const dataDir = mkdtempSync(path.join(os.tmpdir(), "verity-first-start-"));
const pgliteDir = path.join(dataDir, "pglite");

interface Exit {
  code: number | null;
  out: string;
}

/** A real process of this checkout with the data folder above; killed (and failed) if it outlives `timeoutMs`. */
function runProcess(script: string, args: string[], env: Record<string, string>, stdin = "", timeoutMs = 240_000) {
  return new Promise<Exit>((resolve) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, VERITY_DATA_DIR: dataDir };
    delete childEnv.DATABASE_URL;
    const child = spawn(process.execPath, ["--import", "tsx", path.join(root, script), ...args], {
      cwd: root,
      env: childEnv,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.stdin.end(stdin);
    const timer = setTimeout(() => {
      out += `\n[test] still running after ${timeoutMs} ms: killed`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

const verity = (args: string[], stdin = "") => runProcess("scripts/verity.ts", args, {}, stdin);

async function withFolder<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const handle = openDatabase({ kind: "pglite", dir: pgliteDir });
  try {
    return await work(handle.db);
  } finally {
    await handle.close();
  }
}

const signIn = (db: Db, username: string, password: string) =>
  signInWithPassword(db, { username, password, address: null });

beforeAll(async () => {
  // The demo quick start's database: migrated and seeded as `npm start` does (without the extra tasks).
  await ensureEmbeddedDataDir(pgliteDir);
  const handle = openDatabase({ kind: "pglite", dir: pgliteDir });
  try {
    await migrateDatabase(handle.adapterFactory, { log: () => {} });
    await seedDemoData(handle.db);
  } finally {
    await handle.close();
  }
}, 300_000);

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("a demo database restarted outside the demo", () => {
  it("npm start refuses it, naming the demo accounts and the purge command, before serving anything", async () => {
    const start = await runProcess("scripts/start.ts", [], {
      VERITY_DEMO_DATA: "false",
      VERITY_START_SANDBOX: "false",
      PORT: "3977",
    });
    expect(start.out).toContain("refusing to start");
    expect(start.out).toContain(`user ${demoUsers[0].username}`);
    expect(start.out).toContain(`token ${demoAgent.name}`);
    expect(start.out).toContain("npm run -s verity -- demo purge");
    expect(start.out).not.toContain("console on");
    expect(start.code, start.out).toBe(1);
  }, 300_000);

  it("demo purge removes the demo people and revokes the demo tokens; users create and disable work from the CLI", async () => {
    const purge = await verity(["demo", "purge"]);
    expect(purge.code, purge.out).toBe(0);
    expect(purge.out).toContain("removed demo people");

    const admin = await verity(
      ["users", "create", "Rosa", "--role", "admin", "--password-stdin"],
      "rosa's long passphrase\n",
    );
    expect(admin.code, admin.out).toBe(0);
    const operator = await verity([
      "users",
      "create",
      "olga",
      "--role",
      "operator",
      "--display-name",
      "Olga O",
      "--json",
    ]);
    expect(operator.code, operator.out).toBe(0);
    const created = JSON.parse(operator.out.trim().split("\n").at(-1)!) as {
      person: { username: string; role: string };
      initial_password: string;
    };
    expect(created.person).toMatchObject({ username: "olga", role: "operator" });

    await withFolder(async (db) => {
      expect(await signIn(db, demoUsers[0].username, demoUsers[0].password)).toMatchObject({ kind: "invalid" });
      expect(await authenticateApiToken(db, demoAgent.token)).toBeNull();
      expect(await signIn(db, "rosa", "rosa's long passphrase")).toMatchObject({ kind: "signed_in" });
      expect(await signIn(db, "olga", created.initial_password)).toMatchObject({ kind: "signed_in" });
    });

    const disable = await verity(["users", "disable", "olga"]);
    expect(disable.code, disable.out).toBe(0);
    const lastAdmin = await verity(["users", "disable", "rosa"]);
    expect(lastAdmin.code).toBe(1);
    expect(lastAdmin.out).toContain("only enabled admin");
    await withFolder(async (db) => {
      expect(await signIn(db, "olga", created.initial_password)).toMatchObject({ kind: "invalid" });
    });
  }, 600_000);
});
