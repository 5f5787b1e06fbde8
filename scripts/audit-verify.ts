/**
 * `npm run audit:verify`: walks every hash chain of the audit log in the
 * configured database (DATABASE_URL, else the embedded PGlite folder, which
 * must not be open in a running server: use GET /api/v1/audit/verify then),
 * prints a summary, and exits 1 naming the first broken link.
 *
 * `npm run audit:verify -- --export <file> [--contiguous]` checks an export
 * (JSON Lines or CSV) instead, without any database: what a third party runs.
 *
 * Exit codes: 0 intact, 1 broken, 2 usage or I/O error.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { openDatabase } from "@/lib/db/client";
import { verifyAuditExport } from "@/lib/use-cases/audit/audit-export";
import { verifyAuditChains, type AuditVerification } from "@/lib/stores/audit-log";
import { getEnv } from "@/lib/config/env";

let args;
try {
  args = parseArgs({
    options: {
      export: { type: "string" },
      contiguous: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
  }).values;
} catch (error) {
  console.error(
    `${error instanceof Error ? error.message : String(error)}\nusage: npm run audit:verify [-- --export <file> [--contiguous]] [--json]`,
  );
  process.exit(2);
}

if (args.export !== undefined) {
  const result = verifyAuditExport(readFileSync(args.export, "utf8"), { contiguous: args.contiguous });
  if (args.json) console.log(JSON.stringify(result, null, 2));
  const summary = `${result.records} records in ${result.streams} streams (${result.format}), ${result.links} links checked, ${result.gaps} gaps left by the filter`;
  if (result.firstProblem) {
    const p = result.firstProblem;
    console.error(`audit export BROKEN: ${p.message}`);
    if (p.expected !== undefined) console.error(`  expected: ${p.expected}\n  found:    ${p.found}`);
    console.error(`${summary}; ${result.problems.length} problem(s).`);
    process.exit(1);
  }
  console.log(`audit export intact: ${summary}.`);
  process.exit(0);
}

const handle = openDatabase(getEnv().database);
let report: AuditVerification;
try {
  report = await verifyAuditChains(handle.db);
} catch (error) {
  // An unmigrated or unreachable database is no verdict on the chain.
  console.error(`audit:verify could not read the audit log: ${error instanceof Error ? error.message : String(error)}`);
  await handle.close();
  process.exit(2);
}
await handle.close();
if (args.json) console.log(JSON.stringify(report, null, 2));
const summary = `${report.entries} entries in ${report.streams} streams`;
if (report.firstBreak) {
  const b = report.firstBreak;
  console.error(`audit log BROKEN at stream ${b.stream}, seq ${b.seq}, entry ${b.entryId ?? "(missing)"}: ${b.kind}`);
  console.error(`  ${b.message}\n  expected: ${b.expected}\n  found:    ${b.found}`);
  if (report.breaks.length > 1)
    console.error(
      `${report.breaks.length - 1} more stream(s) broken: ${report.breaks
        .slice(1)
        .map((x) => `${x.stream}@${x.seq}`)
        .join(", ")}`,
    );
  console.error(`${summary} checked.`);
  process.exit(1);
}
console.log(`audit log intact: ${summary}, every link verified.`);
process.exit(0);
