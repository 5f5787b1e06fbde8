import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Principal } from "@/lib/model/permissions";
import { mayRecordOutcome } from "@/lib/model/task-authority";
import { getLease } from "@/lib/stores/leases";
import { requireExecutionReach } from "@/lib/use-cases/authority/require-execution-reach";

/**
 * Before recordOutcome: the execution within reach, and the caller is the
 * agent that recorded its intent or holds the task's live lease now. A
 * delegate that merely may see the task cannot declare what another
 * agent's call did.
 */
export async function requireOutcomeAuthority(db: Db, principal: Principal, executionId: string): Promise<void> {
  const { execution } = await requireExecutionReach(db, principal, executionId, { drive: true });
  const lease = await getLease(db, execution.taskId);
  const liveHolder = lease && lease.expiresAt > new Date() ? lease.holder : null;
  if (!mayRecordOutcome(principal, execution, liveHolder)) {
    throw new AppError(
      "forbidden",
      `Only the agent that recorded this intent (${execution.createdBy}) or the task's current lease holder may record its outcome.`,
      { rule: "outcome_by_creator_or_lease_holder" },
    );
  }
}
