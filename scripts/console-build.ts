import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

/**
 * Whether the console's production build is missing or older than its
 * sources: `npm start` (scripts/start.ts) builds then, and the live test
 * servers (tests/live/global-setup.ts) start one at a time so that only the
 * first of them builds: two builds into one .next at once would corrupt it.
 */
export function isConsoleBuildStale(root: string): boolean {
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (!existsSync(buildId)) return true;
  // Everything Next compiles or reads at build: the top-level instrumentation and proxy modules too.
  const sources = [
    "app",
    "components",
    "lib",
    "public",
    "instrumentation.ts",
    "proxy.ts",
    "next.config.js",
    "tsconfig.json",
    "package-lock.json",
    "prisma/schema.prisma",
  ];
  return Math.max(...sources.map((s) => newestMtime(path.join(root, s)))) > statSync(buildId).mtimeMs;
}

function newestMtime(target: string): number {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(target)) {
    if (entry === "node_modules" || entry === "generated") continue;
    newest = Math.max(newest, newestMtime(path.join(target, entry)));
  }
  return newest;
}
