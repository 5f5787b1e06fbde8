import type { Db } from "@/lib/db/client";
import type { Execution } from "@/lib/generated/prisma/client";
import { performEffect } from "@/lib/connectors/effects";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { agent, connectorsFor, refund } from "@/tests/helpers/effects";

/** A refund the way the chaos worker does it: intent, sent, the provider's real answer, success with its evidence, validated, completed. */
export async function completedRefund(
  db: Db,
  baseUrl: string,
  subtasks = [{ id: "issue-refund", title: "Issue the refund", mandatory: true }],
): Promise<{ taskId: string; execution: Execution }> {
  const { task } = await createTask(db, { workflow: "agent-task", intent_id: "consistency", subtasks }, agent);
  let version = task.version;
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
  const intent = await recordIntent(
    db,
    task.id,
    { tool_call_id: "refund", tool: "payments.refund", request: refund, expected_version: version },
    agent,
  );
  if (intent.kind !== "proceed") throw new Error(`intent: ${intent.kind}`);
  await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
  const row = await getExecutionRowOrThrow(db, intent.execution.id);
  const deps = connectorsFor(baseUrl);
  const outcome = await performEffect(row, deps);
  if (outcome.kind !== "succeeded") throw new Error(`refund: ${outcome.kind}`);
  const recorded = await recordOutcome(
    db,
    row.id,
    {
      attempt_id: row.attemptId,
      outcome: "succeeded",
      result: outcome.record,
      evidence: { ...outcome.evidence, record: outcome.record },
      next_status: "VALIDATING",
    },
    agent,
    deps,
  );
  const validating = recorded.task?.version;
  if (validating === undefined) throw new Error("the task did not move on");
  await transitionTask(
    db,
    task.id,
    {
      expected_version: validating,
      to: "COMPLETED",
      patch: { subtasks: subtasks.map((s) => ({ id: s.id, status: "COMPLETED" as const })) },
      reason: "refund confirmed",
    },
    agent,
  );
  return { taskId: task.id, execution: await getExecutionRowOrThrow(db, row.id) };
}
