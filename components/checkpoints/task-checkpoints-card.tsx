import Link from "next/link";
import type { Principal } from "@/lib/model/permissions";
import { can } from "@/lib/model/permissions";
import { countTaskCheckpoints } from "@/lib/adapters/console/checkpoints/checkpoints";
import { taskCheckpointsHref } from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { pluralize } from "@/lib/adapters/console/shared/format";
import { consoleDb } from "@/lib/adapters/auth/session";

/**
 * The task page's way to its checkpoints: how many there are and how to
 * get to them. Loads its own counts (cheap: no signature is checked here),
 * so the task page's loader stays as it is.
 */
export async function TaskCheckpointsCard({ taskId, principal }: { taskId: string; principal: Principal }) {
  if (!can(principal, "checkpoints:read")) return null;
  const counts = await countTaskCheckpoints(await consoleDb(), taskId);
  return (
    <section className="card card--quiet" aria-labelledby="task-checkpoints-heading">
      <h2 id="task-checkpoints-heading">Checkpoints</h2>
      <p>
        {counts.checkpoints === 0
          ? "No checkpoints yet."
          : `${pluralize(counts.checkpoints, "checkpoint")}, the newest of version ${counts.newestVersion}${counts.restores ? `; ${pluralize(counts.restores, "restore attempt")}` : ""}.`}
      </p>
      <p>
        <Link href={taskCheckpointsHref(taskId)}>
          Checkpoint timeline{can(principal, "checkpoints:restore") ? ", inspect and restore" : " and inspector"}{" "}
          <span aria-hidden="true">→</span>
        </Link>
      </p>
    </section>
  );
}
