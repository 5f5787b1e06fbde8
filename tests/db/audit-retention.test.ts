import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { annotateAuditEntry, appendAuditEntry, getAuditEntry, verifyAuditChains } from "@/lib/stores/audit-log";
import {
  applyAuditRetention,
  listLegalHolds,
  placeLegalHold,
  releaseLegalHold,
} from "@/lib/use-cases/audit/audit-retention";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

const agent: AuditActor = { identity: "spiffe://verity.local/agent/worker", kind: "agent" };
const admin: AuditActor = { identity: "spiffe://verity.local/user/admin", kind: "user" };
const day = 86_400_000;

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await openTestPglite();
  db = t.db;
});
afterAll(async () => t.close());

/** A task's history: `ages` in days before now, oldest first. */
async function history(taskId: string, ages: number[]) {
  const entries = [];
  for (const [i, age] of ages.entries()) {
    entries.push(
      await appendAuditEntry(db, {
        action: "task.transitioned",
        actor: agent,
        subject: { type: "task", id: taskId },
        taskId,
        details: { to_version: i + 2 },
        at: new Date(Date.now() - age * day),
      }),
    );
  }
  return entries;
}

async function seqsOf(taskId: string): Promise<number[]> {
  return (
    await t.sql<{ seq: number }>("SELECT seq FROM audit_entries WHERE stream = $1 ORDER BY seq", [`task:${taskId}`])
  ).map((r) => r.seq);
}

describe("retention", () => {
  it("deletes the old prefix of each stream, keeps the chain verifiable from an anchor, and records the cut", async () => {
    const [a1, a2, a3] = await history("ret-a", [100, 90, 80, 10, 1]);
    await history("ret-b", [5, 2]);
    const result = await applyAuditRetention(db, { olderThanDays: 30 }, admin);
    expect(result.cuts.find((c) => c.stream === "task:ret-a")).toEqual({
      stream: "task:ret-a",
      through_seq: 3,
      hash: a3!.hash,
      deleted: 3,
    });
    expect(result.cuts.find((c) => c.stream === "task:ret-b")).toBeUndefined();
    expect(await seqsOf("ret-a")).toEqual([4, 5]);
    expect(await seqsOf("ret-b")).toEqual([1, 2]);
    expect(await getAuditEntry(db, a1!.id)).toBeNull();
    expect(await getAuditEntry(db, a2!.id)).toBeNull();

    const anchors = await t.sql<{ through_seq: number; hash: string; entry_id: string }>(
      "SELECT through_seq, hash, entry_id FROM audit_anchors WHERE stream = 'task:ret-a'",
    );
    expect(anchors).toEqual([{ through_seq: 3, hash: a3!.hash, entry_id: result.entry!.id }]);
    expect(result.entry).toMatchObject({
      action: "audit.retention_applied",
      stream: "system",
      details: { older_than_days: 30 },
    });
    const report = await verifyAuditChains(db);
    expect(report.breaks).toEqual([]);

    // An anchor moved by hand no longer matches the cut its entry recorded, nor links to what remains.
    await t.sql("ALTER TABLE audit_anchors DISABLE TRIGGER audit_anchors_guard");
    await t.sql("UPDATE audit_anchors SET hash = $1 WHERE stream = 'task:ret-a'", [a2!.hash]);
    const moved = await verifyAuditChains(db);
    expect(moved.breaks.map((b) => b.kind).sort()).toEqual(["anchor_mismatch", "link_broken"]);
    await t.sql("UPDATE audit_anchors SET hash = $1 WHERE stream = 'task:ret-a'", [a3!.hash]);
    await t.sql("ALTER TABLE audit_anchors ENABLE TRIGGER audit_anchors_guard");
    expect((await verifyAuditChains(db)).ok).toBe(true);

    // What the anchor vouches for is checked: a prefix deleted by hand is not retention.
    await history("ret-c", [100, 1]);
    await t.sql("ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only");
    await t.sql("DELETE FROM audit_entries WHERE stream = 'task:ret-c' AND seq = 1");
    await t.sql("ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only");
    expect((await verifyAuditChains(db)).firstBreak).toMatchObject({
      stream: "task:ret-c",
      seq: 2,
      kind: "entries_missing",
    });
  });

  it("does nothing, and records nothing, when nothing is old enough", async () => {
    const fresh = await openTestPglite();
    try {
      await appendAuditEntry(fresh.db, {
        action: "auth.denied",
        actor: agent,
        subject: { type: "permission", id: "tasks:create" },
      });
      const result = await applyAuditRetention(fresh.db, { olderThanDays: 30 }, admin);
      expect(result).toMatchObject({ cuts: [], entry: null });
      expect(await fresh.db.auditEntry.count()).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it("refuses a policy shorter than a day", async () => {
    await expect(applyAuditRetention(db, { olderThanDays: 0 }, admin)).rejects.toMatchObject({
      code: "validation_failed",
    });
  });

  it("cuts only through audit_cut_stream: refused for recent entries, unrecorded cuts and by a plain DELETE", async () => {
    const [old] = await history("ret-direct", [100, 1]);
    const cutoff = new Date(Date.now() - 30 * day).toISOString();
    await expect(t.sql("DELETE FROM audit_entries WHERE id = $1", [old!.id])).rejects.toThrow(/append-only/);
    // No audit.retention_applied entry names this cut.
    await expect(t.sql("SELECT audit_cut_stream('task:ret-direct', 1, $1, $2)", [cutoff, old!.id])).rejects.toThrow(
      /not an audit.retention_applied entry/,
    );
    const retention = await appendAuditEntry(db, {
      action: "audit.retention_applied",
      actor: admin,
      subject: { type: "audit_log", id: "system" },
      details: { cuts: [] },
    });
    await expect(
      t.sql("SELECT audit_cut_stream('task:ret-direct', 2, $1, $2)", [cutoff, retention.id]),
    ).rejects.toThrow(/newer than/);
    await expect(
      t.sql("SELECT audit_cut_stream('task:ret-direct', 1, $1, $2)", [
        new Date(Date.now() + day).toISOString(),
        retention.id,
      ]),
    ).rejects.toThrow(/in the future/);
    expect(await seqsOf("ret-direct")).toEqual([1, 2]);
  });
});

describe("legal holds", () => {
  it("freeze deletion of a task's entries, still allow correction annotations, and release", async () => {
    const held = await history("hold-task", [100, 90]);
    await history("free-task", [100, 90]);
    const hold = await placeLegalHold(db, { task_id: "hold-task", reason: "litigation 2026-17" }, admin);
    expect((await listLegalHolds(db)).map((h) => h.id)).toContain(hold.id);

    const result = await applyAuditRetention(db, { olderThanDays: 30 }, admin);
    expect(result.heldStreams).toContain("task:hold-task");
    expect(await seqsOf("free-task")).toEqual([]);
    expect(await seqsOf("hold-task")).toEqual([1, 2]);

    // The database refuses the cut itself, whoever asks.
    const retention = await appendAuditEntry(db, {
      action: "audit.retention_applied",
      actor: admin,
      subject: { type: "audit_log", id: "system" },
      details: { cuts: [] },
    });
    await expect(
      t.sql("SELECT audit_cut_stream('task:hold-task', 1, $1, $2)", [
        new Date(Date.now() - 30 * day).toISOString(),
        retention.id,
      ]),
    ).rejects.toThrow(/legal hold/);

    const note = await annotateAuditEntry(
      db,
      { entry_id: held[0]!.id, note: "Amount was recorded in cents, not dollars." },
      admin,
    );
    expect(note).toMatchObject({ stream: "task:hold-task", seq: 3 });
    expect(await getAuditEntry(db, held[0]!.id)).toEqual(held[0]);

    await releaseLegalHold(db, hold.id, "case closed", admin);
    await expect(releaseLegalHold(db, hold.id, "again", admin)).rejects.toMatchObject({ code: "version_conflict" });
    const after = await applyAuditRetention(db, { olderThanDays: 30 }, admin);
    expect(after.cuts.find((c) => c.stream === "task:hold-task")).toMatchObject({ through_seq: 2, deleted: 2 });
    expect(await seqsOf("hold-task")).toEqual([3]);
    expect(
      (await verifyAuditChains(db)).breaks.filter((b) => b.stream.startsWith("task:hold") || b.stream === "system"),
    ).toEqual([]);
  });

  it("over a time range stop the cut at the first held entry of every stream", async () => {
    await history("range-task", [100, 60, 50, 40]);
    const hold = await placeLegalHold(
      db,
      {
        from: new Date(Date.now() - 65 * day).toISOString(),
        to: new Date(Date.now() - 55 * day).toISOString(),
        reason: "regulator's inquiry",
      },
      admin,
    );
    expect(hold.taskId).toBeNull();
    const result = await applyAuditRetention(db, { olderThanDays: 30 }, admin);
    expect(result.cuts.find((c) => c.stream === "task:range-task")).toMatchObject({ through_seq: 1 });
    expect(await seqsOf("range-task")).toEqual([2, 3, 4]);
    await expect(
      placeLegalHold(db, { from: "2026-01-02T00:00:00Z", to: "2026-01-01T00:00:00Z", reason: "x" }, admin),
    ).rejects.toMatchObject({ code: "validation_failed" });
  });
});
