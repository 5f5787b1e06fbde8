import { beforeAll, describe, expect, it } from "vitest";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import {
  exportAuditRange,
  parseCsv,
  verifyAuditExport,
  type AuditExportFormat,
} from "@/lib/use-cases/audit/audit-export";
import { appendAuditEntry, type AuditRange } from "@/lib/stores/audit-log";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

const agent: AuditActor = { identity: "spiffe://verity.local/agent/worker", kind: "agent" };
const operator: AuditActor = { identity: "spiffe://verity.local/user/operator", kind: "user" };

const db = useTestDatabase();
beforeAll(async () => {
  // A typed username is free text: the CSV must quote its comma, quotes and newline.
  await appendAuditEntry(db, {
    action: "auth.sign_in_failed",
    actor: { identity: "anonymous", kind: "anonymous" },
    subject: { type: "user", id: 'ada,\n"lovelace"' },
  });
  for (let i = 0; i < 12; i++) {
    await appendAuditEntry(db, {
      action: i % 3 === 0 ? "review.decided" : "task.transitioned",
      actor: i % 2 ? operator : agent,
      subject: { type: "task", id: i < 8 ? "exp-a" : "exp-b" },
      taskId: i < 8 ? "exp-a" : "exp-b",
      details: { to_version: i + 2, reason: i === 4 ? 'customer said "no, thanks"\nagain' : undefined },
    });
  }
  await appendAuditEntry(db, {
    action: "auth.denied",
    actor: operator,
    subject: { type: "permission", id: "tasks:create" },
    details: { path: "/api/v1/tasks" },
  });
});

async function exportText(range: AuditRange, format: AuditExportFormat, pageSize = 5): Promise<string> {
  return new Response(exportAuditRange(db, range, format, { pageSize })).text();
}

/** Replaces the first occurrence of `from` on the given 1-based line. */
function editLine(text: string, line: number, from: string, to: string): string {
  const lines = text.split("\n");
  expect(lines[line - 1]).toContain(from);
  lines[line - 1] = lines[line - 1]!.replace(from, to);
  return lines.join("\n");
}

describe("audit export", () => {
  it("streams every entry of the range, page by page, as JSON Lines that verify", async () => {
    const text = await exportText({}, "jsonl");
    const lines = text.trim().split("\n");
    expect(lines).toHaveLength(14);
    expect(JSON.parse(lines[1]!)).toMatchObject({
      stream: "task:exp-a",
      seq: 1,
      prev_hash: "0".repeat(64),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(verifyAuditExport(text, { contiguous: true })).toMatchObject({
      ok: true,
      format: "jsonl",
      records: 14,
      streams: 3,
      links: 11,
      gaps: 0,
    });
  });

  it("as CSV with a header, quoting that survives commas, quotes and newlines, and verifies", async () => {
    const text = await exportText({}, "csv");
    const records = parseCsv(text);
    expect(records[0]!.cells).toEqual([
      "stream",
      "seq",
      "id",
      "at",
      "actor",
      "actor_kind",
      "action",
      "subject_type",
      "subject_id",
      "task_id",
      "details",
      "prev_hash",
      "hash",
    ]);
    expect(records[1]!.cells[8]).toBe('ada,\n"lovelace"');
    // The username's newline makes record 1 two lines long: record 2 starts on line 4.
    expect(records.slice(0, 3).map((r) => r.line)).toEqual([1, 2, 4]);
    expect(records).toHaveLength(15);
    expect(verifyAuditExport(text)).toMatchObject({ ok: true, format: "csv", records: 14, links: 11 });
  });

  it("filters by actor and action; the filtered export verifies, with its gaps counted", async () => {
    const byActor = verifyAuditExport(await exportText({ task: "exp-a", actor: operator.identity }, "jsonl"));
    expect(byActor).toMatchObject({ ok: true, records: 4, gaps: 3 });
    const byAction = await exportText({ action: "review.decided" }, "jsonl");
    expect(
      byAction
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { action: string }).action),
    ).toEqual(["review.decided", "review.decided", "review.decided", "review.decided"]);
    expect(verifyAuditExport(byAction).ok).toBe(true);
  });

  it("fails an edited JSON line and names it", async () => {
    const text = await exportText({ task: "exp-a" }, "jsonl");
    const edited = editLine(text, 3, '"to_version":4', '"to_version":5');
    const result = verifyAuditExport(edited);
    expect(result.ok).toBe(false);
    expect(result.firstProblem).toMatchObject({ line: 3, stream: "task:exp-a", seq: 3, kind: "entry_edited" });
    expect(result.firstProblem?.message).toMatch(/^line 3: /);
  });

  it("fails an edited CSV record and names the line it starts on", async () => {
    const text = await exportText({}, "csv");
    // Line 1 is the header, lines 2-3 the two-line auth record, then task:exp-a seq 1, 2, …: seq 8 is on line 11.
    const edited = editLine(text, 11, "spiffe://verity.local/user/operator", "spiffe://verity.local/user/mallory");
    expect(verifyAuditExport(edited).firstProblem).toMatchObject({
      line: 11,
      stream: "task:exp-a",
      seq: 8,
      kind: "entry_edited",
    });
  });

  it("fails a deleted line of a contiguous export, and a re-hashed line by the next link", async () => {
    const text = await exportText({ task: "exp-a" }, "jsonl");
    const lines = text.trim().split("\n");
    const withoutFourth = [...lines.slice(0, 3), ...lines.slice(4)].join("\n");
    expect(verifyAuditExport(withoutFourth).ok).toBe(true);
    expect(verifyAuditExport(withoutFourth, { contiguous: true }).firstProblem).toMatchObject({
      line: 4,
      seq: 5,
      kind: "entries_missing",
    });
    const forged = JSON.parse(lines[1]!) as Record<string, unknown>;
    forged.hash = "a".repeat(64);
    const rehashed = [lines[0], JSON.stringify(forged), ...lines.slice(2)].join("\n");
    expect(verifyAuditExport(rehashed).firstProblem).toMatchObject({ line: 2, seq: 2, kind: "entry_edited" });
  });

  it("names unreadable lines", () => {
    expect(verifyAuditExport('{"stream":"x"}\nnot json').problems.map((p) => [p.line, p.kind])).toEqual([
      [1, "unreadable"],
      [2, "unreadable"],
    ]);
    expect(verifyAuditExport("a,b\n1,2\n").firstProblem).toMatchObject({ line: 1, kind: "unreadable" });
  });
});
