import { z } from "zod";
import type { LeaseView } from "@/lib/stores/leases";

/** The wire shape of a task's lease: who holds it, until when, and the fencing token its writes carry. */
export const LeaseResourceSchema = z.object({
  task_id: z.string(),
  lease_id: z.string().meta({
    description:
      "This acquisition's id: one worker process's lease. Another acquire, by the same identity too, gets another id and a greater token.",
  }),
  holder: z.string().meta({ description: "Identity of the worker holding it." }),
  fencing_token: z
    .string()
    .regex(/^[0-9]+$/)
    .meta({
      description:
        "Send it with every write (Fencing-Token header or fencing_token): a newer holder's token makes this one stale.",
    }),
  expires_at: z.iso.datetime(),
  acquired_at: z.iso.datetime(),
  renewed_at: z.iso.datetime(),
  active: z.boolean().meta({ description: "expires_at is still in the future (as the server saw it when answering)." }),
});
export type LeaseResource = z.infer<typeof LeaseResourceSchema>;

export const LeaseStateSchema = z.object({
  task_id: z.string(),
  lease: LeaseResourceSchema.nullable().meta({
    description: "The task's latest lease, live or expired; null if it was never leased.",
  }),
});

export function leaseResource(lease: LeaseView, now = new Date()): LeaseResource {
  return {
    task_id: lease.taskId,
    lease_id: lease.leaseId,
    holder: lease.holder,
    fencing_token: lease.fencingToken,
    expires_at: lease.expiresAt.toISOString(),
    acquired_at: lease.acquiredAt.toISOString(),
    renewed_at: lease.renewedAt.toISOString(),
    active: lease.expiresAt.getTime() > now.getTime(),
  };
}
