/**
 * `npm run -s verity -- retention …`: retention and legal holds from the
 * server's host (docs/retention.md, docs/audit.md), the same use cases as
 * /audit/retention, recorded in the audit log as `system:cli`.
 *
 *   retention tasks --days N [--json]   delete finished tasks' data from every store (runs of 25 until done)
 *   retention audit --days N            delete audit entries older than N days, stream prefixes only
 *   retention holds [--all]             the legal holds in force (--all: released ones too)
 *   retention hold [--task ID] [--from ISO] [--to ISO] --reason TEXT
 *   retention release <hold-id> --reason TEXT
 */
import { parseArgs } from "node:util";
import {
  applyAuditRetention,
  listLegalHolds,
  placeLegalHold,
  releaseLegalHold,
} from "@/lib/use-cases/audit/audit-retention";
import { applyTaskRetention, type TaskRetentionResult } from "@/lib/use-cases/retention/apply-task-retention";
import { cliActor, requireArg, usageFailure, UsageError, withCliDatabase } from "@/programs/cli/cli-database";

const usage = `usage: npm run -s verity -- retention <command>
  tasks --days N [--json]     delete finished tasks' data from every store, N days after their last activity
  audit --days N              delete audit entries older than N days (a prefix of each stream)
  holds [--all]               the legal holds in force (--all: released ones too)
  hold [--task ID] [--from ISO] [--to ISO] --reason TEXT
  release <hold-id> --reason TEXT`;

/** Runs of at most 25 tasks, each one transaction, until a run finds fewer. */
const maxRuns = 1000;

function days(value: string | undefined): number {
  const n = Number(requireArg(value, "--days N"));
  if (!Number.isInteger(n) || n < 1) throw new UsageError("--days must be a whole number of days, at least 1");
  return n;
}

export async function runRetentionCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        days: { type: "string" },
        json: { type: "boolean", default: false },
        all: { type: "boolean", default: false },
        task: { type: "string" },
        from: { type: "string" },
        to: { type: "string" },
        reason: { type: "string" },
      },
    });
  } catch (error) {
    return usageFailure(error, usage);
  }
  const { values, positionals } = parsed;
  try {
    switch (positionals[0]) {
      case "tasks": {
        const olderThanDays = days(values.days);
        return withCliDatabase(async ({ db }) => {
          const runs: TaskRetentionResult[] = [];
          for (let i = 0; i < maxRuns; i++) {
            const run = await applyTaskRetention(db, { olderThanDays }, cliActor);
            runs.push(run);
            if (run.tasks.length < 25) break;
          }
          const deleted = runs.flatMap((r) => r.tasks);
          const totals: Record<string, number> = {};
          for (const r of runs) for (const [t, n] of Object.entries(r.rows)) totals[t] = (totals[t] ?? 0) + n;
          const held = runs[runs.length - 1]?.heldTasks ?? [];
          if (values.json) {
            const entries = runs.flatMap((r) => (r.entry ? [r.entry.id] : []));
            console.log(JSON.stringify({ tasks: deleted.map((t) => t.id), rows: totals, held_tasks: held, entries }));
            return 0;
          }
          if (deleted.length === 0) console.log(`no finished task quiet for ${olderThanDays} days outside a hold`);
          else {
            console.log(
              `deleted ${deleted.length} finished task(s) from every store: ${deleted.map((t) => t.id).join(", ")}`,
            );
            for (const [table, n] of Object.entries(totals)) if (n > 0) console.log(`  ${table.padEnd(20)} ${n}`);
          }
          if (held.length > 0) console.log(`kept under a legal hold: ${held.join(", ")}`);
          return 0;
        });
      }
      case "audit": {
        const olderThanDays = days(values.days);
        return withCliDatabase(async ({ db }) => {
          const result = await applyAuditRetention(db, { olderThanDays }, cliActor);
          const deleted = result.cuts.reduce((n, c) => n + c.deleted, 0);
          console.log(
            result.entry
              ? `deleted ${deleted} audit entries older than ${olderThanDays} days from ${result.cuts.length} stream(s)`
              : `no audit entry older than ${olderThanDays} days outside a hold`,
          );
          return 0;
        });
      }
      case "holds":
        return withCliDatabase(async ({ db }) => {
          const holds = await listLegalHolds(db, { includeReleased: values.all });
          if (holds.length === 0) console.log("no legal hold is in force");
          for (const h of holds) {
            const scope = [
              h.taskId ? `task ${h.taskId}` : null,
              h.fromAt ? `from ${h.fromAt.toISOString()}` : null,
              h.toAt ? `to ${h.toAt.toISOString()}` : null,
            ].filter(Boolean);
            console.log(
              `${h.id}  ${scope.join(" ") || "everything"}  "${h.reason}"${h.releasedAt ? `  released ${h.releasedAt.toISOString()}` : ""}`,
            );
          }
          return 0;
        });
      case "hold":
        return withCliDatabase(async ({ db }) => {
          const hold = await placeLegalHold(
            db,
            { task_id: values.task, from: values.from, to: values.to, reason: values.reason ?? "" },
            cliActor,
          );
          console.log(`legal hold ${hold.id} placed`);
          return 0;
        });
      case "release": {
        const holdId = requireArg(positionals[1], "<hold-id>");
        return withCliDatabase(async ({ db }) => {
          const hold = await releaseLegalHold(db, holdId, values.reason ?? "", cliActor);
          console.log(`legal hold ${hold.id} released`);
          return 0;
        });
      }
      default:
        throw new UsageError(positionals[0] ? `unknown command "retention ${positionals[0]}"` : "missing a command");
    }
  } catch (error) {
    return usageFailure(error, usage);
  }
}
