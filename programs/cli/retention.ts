/**
 * `npm run -s verity -- retention …`: retention and legal holds from the
 * server's host (docs/retention.md, docs/audit.md), the same use cases as
 * /audit/retention, recorded in the audit log as `system:cli`.
 *
 *   retention tasks --days N [--json]   delete finished tasks' data from every store (runs of 25, one pass over the old tasks)
 *   retention audit --days N            delete audit entries older than N days, stream prefixes only
 *   retention holds [--all]             the legal holds in force (--all: released ones too)
 *   retention hold [--task ID] [--from ISO] [--to ISO] --reason TEXT
 *   retention hold --tenant-wide --reason TEXT    freezes every deletion of the tenant's data
 *   retention release <hold-id> --reason TEXT
 *   retention policy show [--json]
 *   retention policy set --class CLASS --days N|never
 *
 * Every command takes --tenant ID (default: the first tenant, "default").
 */
import { parseArgs } from "node:util";
import {
  applyAuditRetention,
  listLegalHolds,
  placeLegalHold,
  releaseLegalHold,
} from "@/lib/use-cases/audit/audit-retention";
import { applyTaskRetention, type TaskRetentionResult } from "@/lib/use-cases/retention/apply-task-retention";
import {
  cliActor,
  commandTenantId,
  requireArg,
  usageFailure,
  UsageError,
  withCliDatabase,
} from "@/programs/cli/cli-database";
import type { DatabaseHandle, Db } from "@/lib/db/client";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";
import { dataClasses, type DataClass } from "@/lib/model/retention/data-classes-held";
import { getRetentionPolicy, setRetentionTerm } from "@/lib/stores/retention-policies";
import { findTenant } from "@/lib/stores/tenants";
import { AppError } from "@/lib/core/errors";

const usage = `usage: npm run -s verity -- retention <command>
  tasks --days N [--json]     delete finished tasks' data from every store, N days after their last activity
  audit --days N              delete audit entries older than N days (a prefix of each stream)
  holds [--all]               the legal holds in force (--all: released ones too)
  hold [--task ID] [--from ISO] [--to ISO] --reason TEXT
  hold --tenant-wide --reason TEXT   no deletion of the tenant's data at all while it is in force
  release <hold-id> --reason TEXT
  policy show [--json]        the tenant's retention term per data class
  policy set --class ${dataClasses.join("|")} --days N|never
every command: [--tenant ID]   (default: ${DEFAULT_TENANT_ID})`;

/**
 * Runs of at most 25 tasks, each one transaction reading at most its bound
 * of old tasks, one after the other from the oldest until one has walked to
 * the cutoff: one pass over every task past it, however many are kept.
 */
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
        tenant: { type: "string" },
        "tenant-wide": { type: "boolean", default: false },
        class: { type: "string" },
      },
    });
  } catch (error) {
    return usageFailure(error, usage);
  }
  const { values, positionals } = parsed;
  // `--tenant` is taken off the line by scripts/verity.ts (every group's flag); given here directly, it still counts.
  const tenantId = values.tenant ?? commandTenantId();
  /** The tenant's own client: every command sees and changes that tenant's rows only (row-level security). */
  const inTenant = (work: (db: Db) => Promise<number>) =>
    withCliDatabase(async (handle: DatabaseHandle) => {
      const db = handle.forTenant(tenantId);
      if (!(await findTenant(db, tenantId))) throw new AppError("not_found", `No tenant ${tenantId}.`);
      return work(db);
    });
  try {
    switch (positionals[0]) {
      case "tasks": {
        const olderThanDays = days(values.days);
        return inTenant(async (db) => {
          const runs: TaskRetentionResult[] = [];
          for (let i = 0; i < maxRuns; i++) {
            const run = await applyTaskRetention(db, { olderThanDays }, cliActor, { fromOldest: i === 0 });
            runs.push(run);
            if (run.walk.reachedCutoff) break;
          }
          const deleted = runs.flatMap((r) => r.tasks);
          const totals: Record<string, number> = {};
          for (const r of runs) for (const [t, n] of Object.entries(r.rows)) totals[t] = (totals[t] ?? 0) + n;
          // The held tasks the runs read (each names at most 50): the first 50 of them.
          const held = [...new Set(runs.flatMap((r) => r.heldTasks))].slice(0, 50);
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
        return inTenant(async (db) => {
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
        return inTenant(async (db) => {
          const holds = await listLegalHolds(db, { includeReleased: values.all });
          if (holds.length === 0) console.log("no legal hold is in force");
          for (const h of holds) {
            const scope = [
              h.taskId ? `task ${h.taskId}` : null,
              h.fromAt ? `from ${h.fromAt.toISOString()}` : null,
              h.toAt ? `to ${h.toAt.toISOString()}` : null,
            ].filter(Boolean);
            console.log(
              `${h.id}  ${scope.join(" ") || "tenant-wide"}  "${h.reason}"${h.releasedAt ? `  released ${h.releasedAt.toISOString()}` : ""}`,
            );
          }
          return 0;
        });
      case "hold":
        // A hold over everything is placed only when asked for by name: a forgotten --task must not freeze a whole tenant.
        if (!values.task && !values.from && !values.to && !values["tenant-wide"])
          throw new UsageError("a hold names --task, --from/--to, or --tenant-wide");
        if (values["tenant-wide"] && (values.task || values.from || values.to))
          throw new UsageError("--tenant-wide holds everything: it takes no --task, --from or --to");
        return inTenant(async (db) => {
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
        return inTenant(async (db) => {
          const hold = await releaseLegalHold(db, holdId, values.reason ?? "", cliActor);
          console.log(`legal hold ${hold.id} released`);
          return 0;
        });
      }
      case "policy":
        return await policyCommand(positionals[1], values, inTenant, tenantId);
      default:
        throw new UsageError(positionals[0] ? `unknown command "retention ${positionals[0]}"` : "missing a command");
    }
  } catch (error) {
    return usageFailure(error, usage);
  }
}

async function policyCommand(
  command: string | undefined,
  values: { json?: boolean; class?: string; days?: string },
  inTenant: (work: (db: Db) => Promise<number>) => Promise<number>,
  tenantId: string,
): Promise<number> {
  const show = (terms: Record<DataClass, number | null>) => {
    for (const c of dataClasses)
      console.log(`  ${c.padEnd(13)} ${terms[c] === null ? "kept forever" : `${terms[c]} days`}`);
  };
  switch (command) {
    case "show":
      return inTenant(async (db) => {
        const policy = await getRetentionPolicy(db);
        if (values.json) console.log(JSON.stringify({ tenant: tenantId, set: policy.isSet, terms: policy.terms }));
        else if (!policy.isSet)
          console.log(`tenant ${tenantId} has no retention policy: VERITY_TASK_RETENTION_DAYS applies, if set`);
        else {
          console.log(`tenant ${tenantId}: finished tasks' data is kept after its last activity for`);
          show(policy.terms);
        }
        return 0;
      });
    case "set": {
      const dataClass = requireArg(values.class, "--class");
      if (!(dataClasses as readonly string[]).includes(dataClass))
        throw new UsageError(`--class must be one of ${dataClasses.join(", ")}`);
      const keepDays = requireArg(values.days, "--days N|never") === "never" ? null : days(values.days);
      return inTenant(async (db) => {
        const policy = await setRetentionTerm(
          db,
          { data_class: dataClass as DataClass, keep_days: keepDays },
          cliActor,
        );
        console.log(`tenant ${tenantId}: ${dataClass} ${keepDays === null ? "kept forever" : `kept ${keepDays} days`}`);
        show(policy.terms);
        return 0;
      });
    }
    default:
      throw new UsageError(command ? `unknown command "retention policy ${command}"` : "retention policy show|set");
  }
}
