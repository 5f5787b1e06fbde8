import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { exportAuditRange } from "@/lib/use-cases/audit/audit-export";
import { appendAuditEntry, verifyAuditChains } from "@/lib/stores/audit-log";
import { type AuditEntryInput } from "@/lib/model/audit/audit-chain";
import { applyAuditRetention, placeLegalHold } from "@/lib/use-cases/audit/audit-retention";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";

/**
 * The audit log on the PostgreSQL server: the append-only trigger against a
 * superuser's plain SQL, tampering found by `npm run audit:verify` (the real
 * script, as a process), and concurrent writers: one stream never forks,
 * different streams never wait on each other.
 */
const WRITERS = 16;
const APPENDS_PER_WRITER = 25;
const agent: AuditActor = { identity: "spiffe://verity.test/agent/writer", kind: "agent" };
const root = path.resolve(import.meta.dirname, "../..");

let db: PostgresTestDatabase;
let raw: pg.Client;
beforeAll(async () => {
  db = await createPostgresTestDatabase({ poolSize: WRITERS + 2 });
  raw = new pg.Client({ connectionString: db.url });
  await raw.connect();
});
afterAll(async () => {
  await raw?.end();
  await db?.drop();
});

function entry(taskId: string, n: number): AuditEntryInput {
  return { action: "task.transitioned", actor: agent, subject: { type: "task", id: taskId }, taskId, details: { n } };
}

async function seqsOf(stream: string): Promise<number[]> {
  return (
    await raw.query<{ seq: number }>("SELECT seq FROM audit_entries WHERE stream = $1 ORDER BY seq", [stream])
  ).rows.map((r) => r.seq);
}

function range(n: number, from = 1): number[] {
  return Array.from({ length: n }, (_, i) => i + from);
}

function auditVerify(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ["--import", "tsx", "scripts/audit-verify.ts", ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: db.url },
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("audit log on PostgreSQL", () => {
  it("refuses UPDATE, DELETE and TRUNCATE even to a superuser's plain SQL", async () => {
    const e = await appendAuditEntry(db.db, entry("pg-append-only", 1));
    expect(
      (await raw.query<{ rolsuper: boolean }>("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")).rows[0]
        ?.rolsuper,
    ).toBe(true);
    await expect(raw.query("UPDATE audit_entries SET actor = 'mallory' WHERE id = $1", [e.id])).rejects.toMatchObject({
      code: "23001",
      message: expect.stringMatching(/append-only: UPDATE refused/),
    });
    await expect(raw.query("DELETE FROM audit_entries WHERE id = $1", [e.id])).rejects.toMatchObject({ code: "23001" });
    await expect(raw.query("TRUNCATE audit_entries")).rejects.toMatchObject({ code: "23001" });
    await expect(raw.query("UPDATE audit_streams SET last_seq = 0")).rejects.toMatchObject({ code: "23001" });
    expect(await seqsOf("task:pg-append-only")).toEqual([1]);
  });

  it("keeps one stream gapless and unforked under concurrent writers, each in its own transaction", async () => {
    await Promise.all(
      range(WRITERS).map(async (w) => {
        for (let i = 0; i < APPENDS_PER_WRITER; i++) {
          await db.db.$transaction(async (tx) => {
            await appendAuditEntry(tx, entry("pg-shared", w * 1000 + i));
            // Another task of the same writer in the same transaction: a second head, same order everywhere.
            await appendAuditEntry(tx, entry(`pg-own-${w}`, i));
          });
        }
      }),
    );
    expect(await seqsOf("task:pg-shared")).toEqual(range(WRITERS * APPENDS_PER_WRITER));
    for (const w of range(WRITERS)) expect(await seqsOf(`task:pg-own-${w}`)).toEqual(range(APPENDS_PER_WRITER));
    const report = await verifyAuditChains(db.db);
    expect(report.breaks).toEqual([]);
    expect(report.entries).toBeGreaterThanOrEqual(2 * WRITERS * APPENDS_PER_WRITER);
  });

  it("makes a writer of the same stream wait for the open append, and a writer of another stream not", async () => {
    await appendAuditEntry(db.db, entry("pg-lock-a", 0));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const holder = db.db.$transaction(async (tx) => {
      await appendAuditEntry(tx, entry("pg-lock-a", 1));
      entered();
      await gate;
    });
    await inside;
    // Another stream is not behind the open transaction: this completes while it is still open.
    expect((await appendAuditEntry(db.db, entry("pg-lock-b", 0))).seq).toBe(1);
    // The same stream is: the second writer waits on the head row's lock...
    const waiter = appendAuditEntry(db.db, entry("pg-lock-a", 2));
    for (;;) {
      const waiting = await raw.query(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%audit_entries%'",
      );
      if (waiting.rowCount) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    // ...and continues the chain after the holder's entry once it commits.
    release();
    await holder;
    expect((await waiter).seq).toBe(3);
    expect(await seqsOf("task:pg-lock-a")).toEqual([1, 2, 3]);
  });

  it("cannot fork a stream even with the chain trigger off: (stream, seq) is unique", async () => {
    const e = await appendAuditEntry(db.db, entry("pg-fork", 1));
    await raw.query("SET session_replication_role = replica");
    try {
      await expect(
        raw.query(
          `INSERT INTO audit_entries (tenant_id, id, stream, seq, at, actor, actor_kind, action, subject_type, subject_id, task_id, details, content_digest, prev_hash, hash)
           VALUES ('default', 'aud_fork', $1, 1, now(), 'x', 'agent', 'task.transitioned', 'task', 'pg-fork', 'pg-fork', '{}', 'd', $2, 'h')`,
          [e.stream, e.prevHash],
        ),
      ).rejects.toMatchObject({ code: "23505" });
    } finally {
      await raw.query("SET session_replication_role = origin");
    }
  });

  it("applies retention under a legal hold, keeping every remaining chain verifiable", async () => {
    const old = (taskId: string, n: number) =>
      appendAuditEntry(db.db, { ...entry(taskId, n), at: new Date(Date.now() - (100 - n) * 86_400_000) });
    for (const n of [1, 2, 3]) await old("pg-ret-free", n);
    for (const n of [1, 2]) await old("pg-ret-held", n);
    const admin: AuditActor = { identity: "spiffe://verity.test/user/admin", kind: "user" };
    await placeLegalHold(db.db, { task_id: "pg-ret-held", reason: "litigation" }, admin);
    const result = await applyAuditRetention(db.db, { olderThanDays: 30 }, admin);
    expect(result.cuts.map((c) => [c.stream, c.through_seq, c.deleted])).toContainEqual(["task:pg-ret-free", 3, 3]);
    expect(result.heldStreams).toContain("task:pg-ret-held");
    expect(await seqsOf("task:pg-ret-free")).toEqual([]);
    expect(await seqsOf("task:pg-ret-held")).toEqual([1, 2]);
    await expect(
      raw.query("SELECT audit_cut_stream('task:pg-ret-held', 2, now() - interval '30 days', $1)", [result.entry!.id]),
    ).rejects.toThrow(/legal hold/);
    // The next append to a cut stream continues from the anchor.
    expect((await appendAuditEntry(db.db, entry("pg-ret-free", 4))).seq).toBe(4);
    expect((await verifyAuditChains(db.db)).breaks).toEqual([]);
  });

  it("npm run audit:verify exits 0 on an intact log and 1 naming the first broken link", async () => {
    const intact = auditVerify();
    expect(intact.stderr).toBe("");
    expect(intact.status).toBe(0);
    expect(intact.stdout).toMatch(/audit log intact: \d+ entries in \d+ streams/);

    const victim = await appendAuditEntry(db.db, entry("pg-tamper", 1));
    await appendAuditEntry(db.db, entry("pg-tamper", 2));
    // A superuser who switches the triggers off for the session.
    await raw.query("SET session_replication_role = replica");
    try {
      await raw.query(`UPDATE audit_entries SET details = '{"n": 99}' WHERE id = $1`, [victim.id]);
    } finally {
      await raw.query("SET session_replication_role = origin");
    }
    const broken = auditVerify();
    expect(broken.status).toBe(1);
    expect(broken.stderr).toContain(
      `audit log BROKEN at stream task:pg-tamper, seq 1, entry ${victim.id}: entry_edited`,
    );
    expect(broken.stderr).toMatch(/expected: [0-9a-f]{64}\n {2}found: {4}[0-9a-f]{64}/);
  });

  it("npm run audit:verify -- --export checks a file without the database, naming an edited line", async () => {
    const text = await new Response(exportAuditRange(db.db, { task: "pg-own-1" }, "jsonl")).text();
    const dir = mkdtempSync(path.join(os.tmpdir(), "verity-audit-export-"));
    try {
      const file = path.join(dir, "export.jsonl");
      writeFileSync(file, text);
      const intact = auditVerify("--export", file, "--contiguous");
      expect(intact.stdout).toContain(
        `audit export intact: ${APPENDS_PER_WRITER} records in 1 streams (jsonl), ${APPENDS_PER_WRITER - 1} links checked`,
      );
      expect(intact.status).toBe(0);
      const lines = text.trim().split("\n");
      lines[4] = lines[4]!.replace('"n":4', '"n":40');
      writeFileSync(file, lines.join("\n"));
      const edited = auditVerify("--export", file);
      expect(edited.status).toBe(1);
      expect(edited.stderr).toMatch(
        /^audit export BROKEN: line 5: Entry aud_\w+ \(seq 5\) does not hash to its stored hash/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
