import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isDemoDone, markDemoDone } from "@/programs/demo/runner";

/**
 * The demo runs' marker (programs/demo/runner.ts): the runs are due on every
 * start until it says "done" for this seeded database, so a start killed
 * or stopped anywhere before that runs them again.
 */
const dirs: string[] = [];
const dataDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "verity-demo-marker-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the demo runs' marker", () => {
  it("is due without a marker, done once marked for this seed, due again for another seed", () => {
    const dir = dataDir();
    expect(isDemoDone(dir, "tok_a")).toBe(false);
    markDemoDone(dir, "tok_a", { tasks: { "refund-demo-ok-1": "COMPLETED" } });
    expect(isDemoDone(dir, "tok_a")).toBe(true);
    // A new database under the same data folder (another DATABASE_URL, a deleted pglite folder) is seeded anew.
    expect(isDemoDone(dir, "tok_b")).toBe(false);
    // Written aside and renamed: nothing partial is left next to it.
    expect(readdirSync(dir)).toEqual(["demo-agent-runs.json"]);
  });

  it("reads an earlier Verity's markers: done counts as done, pending and unreadable ones are due", () => {
    const dir = dataDir();
    const file = path.join(dir, "demo-agent-runs.json");
    writeFileSync(file, JSON.stringify({ status: "done", at: "2026-11-30T00:00:00.000Z" }));
    expect(isDemoDone(dir, "tok_a")).toBe(true);
    writeFileSync(file, JSON.stringify({ status: "pending", at: "2026-11-30T00:00:00.000Z" }));
    expect(isDemoDone(dir, "tok_a")).toBe(false);
    writeFileSync(file, '{"status": "do');
    expect(isDemoDone(dir, "tok_a")).toBe(false);
  });
});
