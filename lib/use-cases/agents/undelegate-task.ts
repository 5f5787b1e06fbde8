import type { Db } from "@/lib/db/client";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { revokeDelegation, type DelegationView } from "@/lib/stores/task-delegations";
import { requireOwner } from "@/lib/use-cases/agents/delegate-task";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";

/** The owner ends a delegation: the delegate's next request on the task is a 404 (a lease it holds runs out, it cannot be renewed). */
export async function undelegateTask(
  db: Db,
  principal: Principal,
  taskId: string,
  delegationId: string,
): Promise<DelegationView> {
  requireOwner(principal, await requireTaskReach(db, principal, taskId));
  return revokeDelegation(db, taskId, delegationId, actorOf(principal));
}
