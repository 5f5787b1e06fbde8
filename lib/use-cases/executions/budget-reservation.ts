import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { commitmentLimits, reservationRefusalOf, type Reservation } from "@/lib/model/executions/budget-reservation";
import { liveReservationsOfTask } from "@/lib/stores/execution-store";

/**
 * Refuses (422 invariant_violated, nothing written: the caller's transaction
 * rolls back) a reservation that does not fit the task's commitment as it
 * is now. Called after the intent's task CAS, so the task's row is locked
 * and no other intent of the task can reserve between this read and the
 * commit. A task with no commitment declared limits nothing, so its
 * reservations are not read at all.
 */
export async function refuseUnlessReservationFits(
  db: Db | Tx,
  taskId: string,
  committedUsd: number,
  requested: Reservation | "unreadable",
  except?: string,
): Promise<void> {
  if (!commitmentLimits(committedUsd)) return;
  const live = await liveReservationsOfTask(db, taskId, { except });
  const refusal = reservationRefusalOf({ committedUsd, live, requested });
  if (!refusal) return;
  throw new AppError("invariant_violated", refusal.message, {
    violations: [refusal.violation],
    committedMinor: refusal.committedMinor,
    reservedMinor: refusal.reservedMinor,
    requestedMinor: refusal.requestedMinor,
    currency: refusal.currency,
  });
}
