import { describe, expect, it } from "vitest";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { appendAuditEntry, verifyAuditChains } from "@/lib/stores/audit-log";
import { placeLegalHold, retentionActor, scheduledRetention } from "@/lib/use-cases/audit/audit-retention";
import { startBackgroundLoop } from "@/lib/jobs/background";
import { parseEnvValues } from "@/lib/config/env";
import { loadRetentionOverview } from "@/lib/adapters/console/retention/retention";
import { unreachable } from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

const agent: AuditActor = { identity: "spiffe://verity.local/agent/worker", kind: "agent" };
const admin: AuditActor = { identity: "spiffe://verity.local/user/admin", kind: "user" };
const day = 86_400_000;
const hour = 3_600_000;

describe("VERITY_AUDIT_RETENTION_DAYS and its interval", () => {
  it("keeps everything forever when unset or empty, accepts whole days, refuses anything else", () => {
    const unset = parseEnvValues({});
    expect(unset.success && unset.data.VERITY_AUDIT_RETENTION_DAYS).toBeUndefined();
    expect(unset.success && unset.data.VERITY_AUDIT_RETENTION_INTERVAL_MS).toBe(hour);
    const empty = parseEnvValues({ VERITY_AUDIT_RETENTION_DAYS: "" });
    expect(empty.success && empty.data.VERITY_AUDIT_RETENTION_DAYS).toBeUndefined();
    const set = parseEnvValues({ VERITY_AUDIT_RETENTION_DAYS: "400", VERITY_AUDIT_RETENTION_INTERVAL_MS: "600000" });
    expect(set.success && [set.data.VERITY_AUDIT_RETENTION_DAYS, set.data.VERITY_AUDIT_RETENTION_INTERVAL_MS]).toEqual([
      400, 600_000,
    ]);
    for (const bad of ["0", "-3", "1.5", "ninety", "36501"]) {
      const parsed = parseEnvValues({ VERITY_AUDIT_RETENTION_DAYS: bad });
      expect(parsed.success, bad).toBe(false);
      expect(parsed.error?.issues[0]?.path).toEqual(["VERITY_AUDIT_RETENTION_DAYS"]);
    }
    // More often than once a minute would make a long cut the loop's every tick.
    expect(parseEnvValues({ VERITY_AUDIT_RETENTION_INTERVAL_MS: "1000" }).success).toBe(false);
  });
});

describe("the background loop's retention step", () => {
  const db = useTestDatabase();

  async function history(taskId: string, ages: number[]) {
    for (const [i, age] of ages.entries()) {
      await appendAuditEntry(db, {
        action: "task.transitioned",
        actor: agent,
        subject: { type: "task", id: taskId },
        taskId,
        details: { to_version: i + 2 },
        at: new Date(Date.now() - age * day),
      });
    }
  }
  const seqsOf = async (taskId: string) =>
    (
      await db.auditEntry.findMany({
        where: { stream: `task:${taskId}` },
        orderBy: { seq: "asc" },
        select: { seq: true },
      })
    ).map((e) => e.seq);
  const retentionEntries = () =>
    db.auditEntry.findMany({ where: { stream: "system", action: "audit.retention_applied" }, orderBy: { seq: "asc" } });

  it("applies the policy as the system, spares what a legal hold covers, and runs at most once per interval", async () => {
    await history("bg-old", [200, 100, 1]);
    await history("bg-held", [200, 100, 1]);
    await placeLegalHold(db, { task_id: "bg-held", reason: "litigation 2026-17" }, admin);

    const lines: string[] = [];
    const loop = startBackgroundLoop(db, unreachable, 60 * 60_000, {
      retention: { olderThanDays: 30, everyMs: hour },
      log: (l) => lines.push(l),
    });
    try {
      const report = await loop.runOnce();
      expect(report.errors).toBe(0);
      expect(await seqsOf("bg-old")).toEqual([3]);
      expect(await seqsOf("bg-held")).toEqual([1, 2, 3]);
      const [entry] = await retentionEntries();
      expect(entry).toMatchObject({
        actor: retentionActor.identity,
        actorKind: "system",
        details: { older_than_days: 30, held_streams: ["task:bg-held"] },
      });
      expect(
        lines.some((l) => l.includes("audit retention (30 days) deleted 2 entries from 1 stream(s); 1 held")),
      ).toBe(true);

      // Within the interval the step does not run: new old entries stay until the next hour.
      await history("bg-later", [300, 1]);
      await loop.runOnce();
      expect(await seqsOf("bg-later")).toEqual([1, 2]);
      expect(await retentionEntries()).toHaveLength(1);
    } finally {
      await loop.stop();
    }
    expect((await verifyAuditChains(db)).breaks).toEqual([]);

    const overview = await loadRetentionOverview(db);
    expect(overview.anchors.map((a) => [a.stream, a.throughSeq])).toEqual([["task:bg-old", 2]]);
    expect(overview.runs[0]).toMatchObject({
      actor: retentionActor.identity,
      olderThanDays: 30,
      streams: 1,
      heldStreams: 1,
    });
    expect(overview.holds.map((h) => h.taskId)).toEqual(["bg-held"]);
  });

  it("runs again once the interval has passed, and a run that finds nothing records nothing", async () => {
    let now = Date.now();
    const retain = scheduledRetention({ olderThanDays: 30, everyMs: hour }, () => now);
    await history("clock-a", [90, 1]);
    const first = await retain(db);
    expect(first?.cuts.map((c) => c.stream)).toContain("task:clock-a");
    await history("clock-b", [90, 1]);
    now += hour - 1;
    expect(await retain(db)).toBeNull();
    expect(await seqsOf("clock-b")).toEqual([1, 2]);
    now += 1;
    const second = await retain(db);
    expect(second?.cuts.map((c) => c.stream)).toEqual(["task:clock-b"]);
    expect(await seqsOf("clock-b")).toEqual([2]);
    now += hour;
    const idle = await retain(db);
    expect(idle).toMatchObject({ cuts: [], entry: null });
  });
});
