import type { Execution } from "@/lib/generated/prisma/client";

/**
 * What is wrong with a success's evidence, in words, or null when it names
 * this execution (its id or its idempotency key) and nothing else. Stricter
 * than the outcome's own check (execution-rules.ts), which accepts evidence
 * naming ours among others: evidence that also names another execution or
 * key is a record of someone else's effect as much as ours.
 */
export function evidenceProblem(evidence: unknown, execution: Pick<Execution, "id" | "idempotencyKey">): string | null {
  if (!isRecord(evidence)) return "is missing";
  const keys = new Set<string>();
  const ids = new Set<string>();
  const collect = (node: Record<string, unknown>, depth: number) => {
    for (const k of ["idempotency_key", "idempotencyKey"]) if (typeof node[k] === "string") keys.add(node[k]);
    for (const k of ["execution_id", "executionId"]) if (typeof node[k] === "string") ids.add(node[k]);
    if (depth >= 2) return;
    // confirmed_at_provider: the provider's own record, added by the engine when it confirmed the success.
    for (const nested of ["metadata", "record", "refund", "note", "confirmed_at_provider"]) {
      const child = node[nested];
      if (isRecord(child)) collect(child, depth + 1);
    }
  };
  collect(evidence, 0);
  const otherKeys = [...keys].filter((k) => k !== execution.idempotencyKey);
  const otherIds = [...ids].filter((i) => i !== execution.id);
  if (otherKeys.length > 0 || otherIds.length > 0) {
    const named = [...otherIds.map((i) => `execution ${i}`), ...otherKeys.map((k) => `key ${k}`)].join(", ");
    return `names another effect (${named})`;
  }
  if (!keys.has(execution.idempotencyKey) && !ids.has(execution.id))
    return "names neither this execution nor its idempotency key";
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}
