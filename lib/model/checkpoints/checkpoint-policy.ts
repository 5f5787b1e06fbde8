import { digestOf } from "@/lib/core/canonical-json";
import { permissionsByRole } from "@/lib/model/permissions";
import { tools } from "@/lib/model/executions/tools";
import { getEnv } from "@/lib/config/env";

/**
 * The provenance a checkpoint records about authority, so a restore can say
 * what changed since — and never reuse it. Policy decisions, credentials
 * and remaining budget are re-read at restore time, never taken from a
 * checkpoint (the spec's anti-pattern "restoring old credentials or budgets
 * from checkpoint: stale privilege and spend").
 */

let cachedPolicyVersion: string | undefined;

/**
 * `policy:<16 hex>`: a digest of what decides who may do what — the role →
 * permission table, which tools are irreversible, and the four-eyes
 * threshold. Two servers with the same policy give the same version.
 */
export function currentPolicyVersion(): string {
  cachedPolicyVersion ??= policyVersionOf(getEnv().VERITY_FOUR_EYES_THRESHOLD_CENTS);
  return cachedPolicyVersion;
}

/**
 * The version this release's policy has under a given four-eyes threshold,
 * the one setting that feeds it: what a standby restoring a primary's
 * configuration checks before it starts (lib/use-cases/failover/restore-recovery-secrets.ts).
 */
export function policyVersionOf(fourEyesThresholdCents: number): string {
  return `policy:${digestOf({
    permissions: permissionsByRole,
    irreversible_tools: Object.entries(tools)
      .filter(([, t]) => t.irreversible)
      .map(([name]) => name)
      .sort(),
    four_eyes_threshold_cents: fourEyesThresholdCents,
  }).slice("sha256:".length, "sha256:".length + 16)}`;
}

/** Who the work is delegated to, pinned: the intent, who created the task, the active agents, the lease holder. */
export function delegationHashOf(input: {
  intentId: string;
  createdBy: string;
  activeAgents: readonly string[];
  leaseHolder: string | null;
}): string {
  return digestOf({
    intent_id: input.intentId,
    created_by: input.createdBy,
    active_agents: [...input.activeAgents].sort(),
    lease_holder: input.leaseHolder,
  });
}
