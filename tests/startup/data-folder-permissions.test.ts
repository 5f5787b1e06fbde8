/**
 * Issue 11: the embedded database folder was world-readable (0755 folders,
 * 0644 files). It is created 0700 with its files 0600, and a start tightens
 * whatever PGlite wrote since.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, describe, expect, it } from "vitest";
import { ensureEmbeddedDataDir } from "@/lib/db/embedded-init";

const root = mkdtempSync(path.join(os.tmpdir(), "verity-perms-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every folder and file under `dir` that someone other than its owner may read, write or enter. */
function openToOthers(dir: string): string[] {
  const open: string[] = [];
  const folders = [dir];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    if ((statSync(folder).mode & 0o077) !== 0) open.push(`${folder} ${(statSync(folder).mode & 0o777).toString(8)}`);
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const p = path.join(folder, entry.name);
      if (entry.isDirectory()) folders.push(p);
      else if ((statSync(p).mode & 0o077) !== 0) open.push(`${p} ${(statSync(p).mode & 0o777).toString(8)}`);
    }
  }
  return open;
}

describe("the embedded database folder", () => {
  it("is created 0700 with files 0600, under a umask that would make them 0755/0644", async () => {
    const previous = process.umask(0o022);
    try {
      const dataDir = path.join(root, "data");
      const dir = path.join(dataDir, "pglite");
      expect(await ensureEmbeddedDataDir(dir)).toBe(true);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(path.join(dir, "PG_VERSION")).mode & 0o777).toBe(0o600);
      expect(openToOthers(dir)).toEqual([]);

      // PGlite running on it writes new files with the umask; the next start tightens them.
      const db = new PGlite(dir);
      await db.exec("CREATE TABLE t (x int); INSERT INTO t SELECT generate_series(1, 1000); CHECKPOINT;");
      await db.close();
      expect(await ensureEmbeddedDataDir(dir)).toBe(false);
      expect(openToOthers(dir)).toEqual([]);
    } finally {
      process.umask(previous);
    }
  }, 120_000);
});
