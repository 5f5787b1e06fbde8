import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { signWebhook, verifyWebhookSignature } from "@/lib/connectors/sandbox/webhook-signature";
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
  return db.execution.findUniqueOrThrow({ where: { id: intent.execution.id } });
}

export type LookupMode =
  | { kind: "found"; record?: Record<string, unknown> }
  | { kind: "not_found" }
  | { kind: "unknown" }
  | { kind: "signed_wrongly" }
  | { kind: "status"; status: number };

/**
 * A tool owner's lookup endpoint over real HTTP: it refuses (401) a question
 * not signed with `secret`, and answers each key as `modes` says, signed
 * with `secret` (or, for `signed_wrongly`, with another).
 */
export async function lookupServer(secret: string, modes: Map<string, LookupMode>) {
  const questions: Array<Record<string, unknown>> = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      const answer = (status: number, value: unknown, signWith = secret) => {
        const text = JSON.stringify(value);
        res.writeHead(status, {
          "Content-Type": "application/json",
          "Verity-Signature": signWebhook(signWith, text, Math.floor(Date.now() / 1000)),
        });
        res.end(text);
      };
      if (
        !verifyWebhookSignature({
          secret,
          header: (req.headers["verity-signature"] as string | undefined) ?? null,
          body,
        })
      )
        return answer(401, { error: "bad signature" });
      const question = JSON.parse(body) as {
        idempotency_key: string;
        execution_id: string;
        request: Record<string, unknown>;
      };
      questions.push(question);
      const key = question.idempotency_key;
      const mode = modes.get(key) ?? { kind: "not_found" };
      switch (mode.kind) {
        case "found":
          return answer(200, {
            idempotency_key: key,
            result: "found",
            record: {
              id: `po_${question.execution_id}`,
              idempotency_key: key,
              metadata: { execution_id: question.execution_id },
              ...question.request,
              ...mode.record,
            },
          });
        case "not_found":
          return answer(200, { idempotency_key: key, result: "not_found" });
        case "unknown":
          return answer(200, { idempotency_key: key, result: "unknown", reason: "the payout is still processing" });
        case "signed_wrongly":
          return answer(200, { idempotency_key: key, result: "not_found" }, "not-the-lookup-secret");
        case "status":
          return answer(mode.status, { error: "down" });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/verity/lookup`,
    questions,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
