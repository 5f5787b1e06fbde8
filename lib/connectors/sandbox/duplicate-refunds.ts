import type { SandboxRefund } from "@/lib/connectors/sandbox/contract";

/**
 * "Zero duplicate refunds", stated once so the sandbox's stats and every
 * chaos test check the same thing: no two refunds for the same charge carry
 * the same execution id, and no idempotency key has more than one refund.
 * The second can only fail through a sandbox bug; the first is what an agent
 * causes when it retries an unknown outcome under a fresh key.
 */
export interface DuplicateRefunds {
  /** Refunds sharing charge_id and metadata.execution_id. */
  byExecution: Array<{ chargeId: string; executionId: string; refundIds: string[] }>;
  /** Refunds sharing an idempotency key. */
  byIdempotencyKey: Array<{ idempotencyKey: string; refundIds: string[] }>;
}

export function findDuplicateRefunds(refunds: readonly SandboxRefund[]): DuplicateRefunds {
  const byExecution = new Map<string, { chargeId: string; executionId: string; refundIds: string[] }>();
  const byKey = new Map<string, string[]>();
  for (const refund of refunds) {
    const executionId = refund.metadata.execution_id;
    if (executionId !== undefined) {
      const id = JSON.stringify([refund.charge_id, executionId]);
      const group = byExecution.get(id) ?? { chargeId: refund.charge_id, executionId, refundIds: [] };
      group.refundIds.push(refund.id);
      byExecution.set(id, group);
    }
    byKey.set(refund.idempotency_key, [...(byKey.get(refund.idempotency_key) ?? []), refund.id]);
  }
  return {
    byExecution: [...byExecution.values()].filter((g) => g.refundIds.length > 1),
    byIdempotencyKey: [...byKey]
      .filter(([, ids]) => ids.length > 1)
      .map(([idempotencyKey, refundIds]) => ({ idempotencyKey, refundIds })),
  };
}
