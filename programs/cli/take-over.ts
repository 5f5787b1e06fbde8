/**
 * `npm run -s verity -- recovery take-over --as <username> (--all | <task id>…) [--json]`:
 * the runbook's takeover step (docs/recovery.md, "Takeover", step 1) on a
 * standby, before any worker: per task, `takeOverTask` reconciles what the
 * backup left unsettled and rolls the task forward to its newest shipped
 * checkpoint that verifies under the standby's keys. Run it with the
 * standby's configuration (the environment file `restore-secrets` wrote):
 * the keys verify, the connectors reach the provider. A restore is a
 * person's act, an engineer's (checkpoints:restore): it is recorded as the
 * person named by --as.
 */
import { getConnectors } from "@/lib/connectors/effects";
import type { Db } from "@/lib/db/client";
import { isAppError } from "@/lib/core/errors";
import { can, userIdentity } from "@/lib/model/permissions";
import { getPerson } from "@/lib/stores/users";
import { takeOverTask, type TakeoverReport } from "@/lib/use-cases/failover/failover";
import { listTasks } from "@/lib/use-cases/tasks/list-tasks";
import { UsageError, withCliDatabase } from "@/programs/cli/cli-database";

const atRest = new Set(["COMPLETED", "CANCELLED", "PERMANENTLY_FAILED"]);

export async function runTakeOver(options: {
  as: string | undefined;
  all: boolean;
  taskIds: string[];
  json: boolean;
}): Promise<number> {
  if (!options.as) throw new UsageError("missing --as <username>: the engineer the restores are recorded as");
  if (options.all === options.taskIds.length > 0) throw new UsageError("name the tasks, or --all (not both)");
  const username = options.as;
  return withCliDatabase(async ({ db }) => {
    const person = await getPerson(db, { username });
    if (!person || person.disabledAt) {
      console.error(`verity: no enabled person "${username}" on this database`);
      return 1;
    }
    if (!can(person, "checkpoints:restore")) {
      console.error(
        `verity: ${username} is ${person.role}: a takeover restores checkpoints, which needs checkpoints:restore (the engineer role)`,
      );
      return 1;
    }
    const engineer = { identity: userIdentity(username), kind: "user" as const };
    const connectors = getConnectors();
    // Every id first: a takeover moves the tasks it takes over in the list's (updated_at) order.
    const taskIds = options.all ? await tasksNotAtRest(db) : options.taskIds;
    let failed = 0;
    for (const taskId of taskIds) {
      try {
        const report = await takeOverTask(db, taskId, engineer, connectors);
        console.log(options.json ? JSON.stringify(reportJson(report)) : describe(report));
      } catch (error) {
        if (!isAppError(error)) throw error;
        failed++;
        console.error(`verity: ${taskId}: ${error.message}`);
      }
    }
    if (!options.json) console.log(`took over ${taskIds.length - failed} of ${taskIds.length} tasks as ${username}`);
    return failed > 0 ? 1 : 0;
  });
}

async function tasksNotAtRest(db: Db): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listTasks(db, { limit: 200, ...(cursor ? { cursor } : {}) });
    ids.push(...page.items.filter((t) => !atRest.has(t.status)).map((t) => t.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

function reportJson(r: TakeoverReport) {
  const forward = r.rollForward;
  return {
    task_id: r.taskId,
    backup_version: r.backupVersion,
    settled: r.settled.map((s) => ({ execution_id: s.executionId, from: s.from, action: s.action })),
    roll_forward:
      forward.kind === "up_to_date"
        ? { kind: forward.kind }
        : {
            kind: forward.kind,
            checkpoint_id: forward.checkpoint.id,
            state_version: forward.checkpoint.stateVersion,
            ...(forward.kind === "refused" ? { code: forward.code, message: forward.message } : {}),
          },
    skipped_invalid: r.skippedInvalid,
  };
}

function describe(r: TakeoverReport): string {
  const forward = r.rollForward;
  const outcome =
    forward.kind === "up_to_date"
      ? "no newer shipped checkpoint that verifies: the backup's copy stands"
      : forward.kind === "rolled_forward"
        ? `rolled forward to version ${forward.checkpoint.stateVersion} (checkpoint ${forward.checkpoint.id})`
        : `roll-forward to ${forward.checkpoint.id} refused (${forward.code}): ${forward.message}`;
  const settled = r.settled.length
    ? `; settled first: ${r.settled.map((s) => `${s.executionId} ${s.action}`).join(", ")}`
    : "";
  const skipped = r.skippedInvalid
    ? `; ${r.skippedInvalid} newer checkpoints passed over: they do not verify here`
    : "";
  return `${r.taskId}: backup version ${r.backupVersion}; ${outcome}${settled}${skipped}`;
}
