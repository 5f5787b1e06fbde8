import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";

/**
 * Creates the embedded database's data folder so that a kill at any moment
 * leaves either no database or a whole one.
 *
 * PGlite decides by `PG_VERSION` alone: without it, it runs initdb (in
 * memory) and unpacks the result into the folder, file by file, with
 * PG_VERSION near the end and postgresql.conf, pg_hba.conf … after it. A
 * process killed in between leaves a folder with PG_VERSION and no
 * configuration, which PGlite takes for a database and then fails to start
 * ("PGlite failed to initialize properly") on every start after. So the
 * folder is built beside its place (`<dir>.partial`), closed cleanly, and
 * renamed into place: rename is atomic, and `<dir>` never holds half a
 * database. A `<dir>` without PG_VERSION holds none (PGlite would initdb
 * over it) and is replaced. Returns whether it created the folder. The
 * fault points (tests/startup/) are `init:built` (closed, not yet in place)
 * and `init:cleared` (the old folder gone, the new one not yet renamed).
 */
export async function ensureEmbeddedDataDir(
  dir: string,
  options: { faultPoint?: (point: string) => void } = {},
): Promise<boolean> {
  const fault = options.faultPoint ?? (() => {});
  if (dir.startsWith("memory://")) return false;
  if (existsSync(path.join(dir, "PG_VERSION"))) {
    restrictToOwner(dir);
    return false;
  }
  const partial = `${dir}.partial`;
  // Left by a start killed while it was being built: it may be incomplete in any way.
  rmSync(partial, { recursive: true, force: true });
  // The data folder holds the database and the generated secrets: the owner's alone.
  mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
  const pglite = new PGlite(partial);
  try {
    await pglite.waitReady;
  } finally {
    await pglite.close();
  }
  restrictToOwner(partial);
  fault("init:built");
  rmSync(dir, { recursive: true, force: true });
  fault("init:cleared");
  renameSync(partial, dir);
  return true;
}

/**
 * The database folder readable by its owner only: folders 0700, files 0600.
 * PGlite writes its files through Node with the process's umask (0644 under
 * the usual 022), so the tree is tightened after it is built and again at
 * every start, which also covers files PGlite added while it ran; those sit
 * under a 0700 folder meanwhile, out of anyone else's reach.
 */
function restrictToOwner(root: string): void {
  const folders = [root];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    chmodSync(folder, 0o700);
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const entryPath = path.join(folder, entry.name);
      if (entry.isDirectory()) folders.push(entryPath);
      else if (entry.isFile()) chmodSync(entryPath, 0o600);
    }
  }
}
