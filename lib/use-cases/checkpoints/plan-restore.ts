import { z } from "zod";
import type { Db, Tx } from "@/lib/db/client";
import type { Checkpoint } from "@/lib/generated/prisma/client";
import type { CheckpointKeyring } from "@/lib/model/checkpoints/checkpoint-keys";
import { keyringOf, openedCheckpoint, type CheckpointOptions } from "@/lib/stores/checkpoint-store";
import { verifyStoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import { currentPolicyVersion } from "@/lib/model/checkpoints/checkpoint-policy";
import { classifyEffects, decideRestore, diffStates } from "@/lib/model/checkpoints/checkpoint-restore-rules";
import { hasOpenDivergence } from "@/lib/use-cases/alerts/divergence";
import { liveReservationsAmong } from "@/lib/model/executions/budget-reservation";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { parseOrThrow } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import type { TaskState } from "@/lib/model/tasks/task-state";
import type { RestorePlan } from "@/lib/model/checkpoints/restore-plan";
import {
  getCheckpointRowOrThrow,
  getTaskOrThrowIn,
  triggerOf,
  workflowOf,
} from "@/lib/use-cases/checkpoints/checkpoint-rows";
import { findExecutions } from "@/lib/stores/execution-store";

export const RestorePlanInputSchema = z.strictObject({
  /** Restore a checkpoint older than the committed state: the engineer's explicit choice. */
  rewind: z.boolean().default(false),
});

/** The dry run: what restoring would do, and whether it would be refused. Writes nothing. */
export async function planRestore(
  db: Db,
  checkpointId: string,
  raw: unknown,
  actor: Actor,
  options: CheckpointOptions = {},
): Promise<RestorePlan> {
  const input = parseOrThrow(RestorePlanInputSchema, raw ?? {});
  const row = await getCheckpointRowOrThrow(db, checkpointId);
  return buildRestorePlan(db, row, input.rewind, actor, keyringOf(options));
}

/** The plan as planRestore shows it; restoreCheckpoint and failTaskWithoutValidCheckpoint build it again inside their transaction. */
export async function buildRestorePlan(
  reader: Db | Tx,
  row: Checkpoint,
  rewind: boolean,
  actor: Actor,
  keyring: CheckpointKeyring,
): Promise<RestorePlan> {
  const current = await getTaskOrThrowIn(reader, row.taskId);
  const def = workflowOf(current);
  const verified = verifyStoredCheckpoint(row, keyring, {
    task: { id: current.id, workflowDigest: current.workflow.digest },
  });
  const executions = await findExecutions(reader, { where: { taskId: row.taskId }, orderBy: { createdAt: "asc" } });
  const undecided = await reader.review.findMany({
    where: { taskId: row.taskId, status: { in: ["OPEN", "ESCALATED"] } },
    select: { executionId: true },
  });
  // The alerts that block irreversible work block a restore too; a stale-write
  // or a stale-restore alert on the task does not (lib/use-cases/alerts/divergence.ts).
  const diverged = await hasOpenDivergence(reader, row.taskId);
  const leaseRows = await reader.$queryRaw<
    Array<{ holder: string; fencing_token: string; expires_at: Date; live: boolean }>
  >`
    SELECT holder, fencing_token::text AS fencing_token, expires_at, expires_at > now() AS live FROM leases WHERE task_id = ${row.taskId}`;
  const lease = leaseRows[0]?.live ? leaseRows[0] : null;
  const effects = classifyEffects(executions, new Set(undecided.map((r) => r.executionId)));
  const document = verified.parsed?.document ?? null;
  const decision = decideRestore({
    integrity: verified.report,
    def,
    current: current.state,
    checkpointVersion: row.stateVersion,
    snapshot: document?.state_snapshot ?? null,
    rewind,
    hasOpenDivergence: diverged,
    effects,
    liveReservations: liveReservationsAmong(executions),
  });
  const refusalCode = decision.refusal?.code;
  const fallback =
    refusalCode === "corrupt" || refusalCode === "incompatible"
      ? await findFallback(reader, row, keyring, current)
      : null;
  const now = new Date();
  const resultingState = decision.resultingState
    ? {
        ...decision.resultingState,
        version: current.version + 1,
        updated_at: now.toISOString(),
        updated_by: actor.identity,
      }
    : null;
  const consumed = (s: TaskState) => ({
    currency_usd: s.budget.currency_spent_usd,
    tokens: s.budget.tokens_spent,
    hops: s.budget.hops_used,
  });
  const checkpointConsumed = document?.budget_consumed ?? { currency_usd: 0, tokens: 0, hops: 0 };
  const policy = currentPolicyVersion();
  return {
    checkpointId: row.id,
    taskId: row.taskId,
    kind: decision.kind,
    rewind,
    allowed: decision.refusal === null,
    refusal: decision.refusal,
    fallbackCheckpointId: fallback?.id ?? null,
    fallbackMessage:
      refusalCode === "corrupt" || refusalCode === "incompatible"
        ? fallback
          ? `Checkpoint ${fallback.id} (version ${fallback.stateVersion}) is the newest earlier checkpoint that verifies.`
          : "No earlier checkpoint of this task verifies. A worker resuming this task ends it as failed, with an audit record (resumeFromNewestValidCheckpoint)."
        : null,
    integrity: verified.report,
    current: { version: current.version, status: current.status },
    checkpoint: {
      stateVersion: row.stateVersion,
      status: document?.state_snapshot.status ?? null,
      trigger: triggerOf(row.trigger),
      createdAt: row.createdAt,
    },
    effects,
    reauthorization: {
      budget: {
        checkpoint: checkpointConsumed,
        current: consumed(current.state),
        resulting: resultingState ? consumed(resultingState) : consumed(current.state),
        committedUsd: current.state.budget.currency_committed_usd,
      },
      workflow: {
        checkpointDigest: document?.workflow_definition_digest ?? null,
        currentDigest: current.workflow.digest,
        name: def.name,
        version: def.version,
        compatible: verified.report.checks.some((c) => c.check === "workflow_compatible" && c.ok),
      },
      policyVersion: {
        checkpoint: document?.provenance.policy_version ?? null,
        current: policy,
        changed: !!document && document.provenance.policy_version !== policy,
      },
      credentials:
        "Never stored in checkpoints: every worker authenticates with its own token and acquires a new lease after the restore.",
    },
    lease: {
      active: !!lease,
      holder: lease?.holder ?? null,
      fencingToken: lease?.fencing_token ?? null,
      expiresAt: lease ? new Date(lease.expires_at) : null,
      action: lease && decision.refusal === null ? "fence" : "none",
    },
    resultingState,
    diff: resultingState ? diffStates(current.state, resultingState) : [],
  };
}

async function findFallback(
  reader: Db | Tx,
  row: Checkpoint,
  keyring: CheckpointKeyring,
  task: TaskView,
): Promise<Checkpoint | null> {
  const earlier = await reader.checkpoint.findMany({
    where: {
      taskId: row.taskId,
      id: { not: row.id },
      OR: [
        { stateVersion: { lt: row.stateVersion } },
        { stateVersion: row.stateVersion, createdAt: { lt: row.createdAt } },
      ],
    },
    orderBy: [{ stateVersion: "desc" }, { createdAt: "desc" }],
    take: 200,
  });
  const context = { task: { id: task.id, workflowDigest: task.workflow.digest } };
  for (const stored of earlier) {
    const c = await openedCheckpoint(reader, stored);
    if (verifyStoredCheckpoint(c, keyring, context).report.ok) return c;
  }
  return null;
}
