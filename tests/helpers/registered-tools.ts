import { expect } from "vitest";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { registerTool } from "@/lib/use-cases/tools/register-tool";
import type { Execution } from "@/lib/generated/prisma/client";
import { agent, runningTask } from "@/tests/helpers/effects";

/** Fixtures for registered tools: a definition Verity did not write, its registration, a call of it, and a tool owner's lookup endpoint. */

export const admin: Actor = { identity: "spiffe://verity.local/user/admin", kind: "user" };

/** An irreversible payout reconciled as `reconciliation` says; amount at /amount_minor. */
export function payoutTool(name: string, reconciliation: Record<string, unknown>, over: Record<string, unknown> = {}) {
  return {
    name,
    version: 1,
    description: "Send a payout to a payee (money leaves)",
    irreversible: true,
    request_schema: {
      type: "object",
      additionalProperties: false,
      required: ["amount_minor", "currency", "payee"],
      properties: {
        amount_minor: { type: "integer", minimum: 1 },
        currency: { type: "string", pattern: "^[a-z]{3}$" },
        payee: { type: "string", minLength: 1 },
      },
    },
    topic: "payout",
    idempotency_window_seconds: 86_400,
    amount: { amount_pointer: "/amount_minor", currency_pointer: "/currency" },
    identity_fields: ["/amount_minor", "/currency", "/payee"],
    max_attempts: 2,
    reconciliation,
    ...over,
  };
}

export const payout = { amount_minor: 1500, currency: "eur", payee: "acct_42" };

export async function registered(db: Db, def: Record<string, unknown>): Promise<void> {
  expect((await registerTool(db, def, admin)).kind).toBe("registered");
}

/** A call of a registered tool on a fresh running task: intent recorded and marked SENT, as its agent does before the call. */
export async function sentCall(db: Db, tool: string, request: Record<string, unknown> = payout): Promise<Execution> {
  const task = await runningTask(db);
  const intent = await recordIntent(
    db,
    task.id,
    { tool_call_id: "call-1", tool, request, expected_version: task.version },
    agent,
  );
  expect(intent.kind).toBe("proceed");
  await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
  return getExecutionRowOrThrow(db, intent.execution.id);
}
