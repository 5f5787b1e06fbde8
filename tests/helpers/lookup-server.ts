import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { signWebhook, verifyWebhookSignature } from "@/lib/connectors/sandbox/webhook-signature";

/**
 * A tool owner's lookup endpoint over real HTTP, for the database tests and
 * the browser tests alike (no test runner's imports here).
 */
export type LookupMode =
  | { kind: "found"; record?: Record<string, unknown> }
  | { kind: "not_found" }
  | { kind: "unknown" }
  | { kind: "signed_wrongly" }
  | { kind: "status"; status: number }
  /** Answers as `then` does, `ms` later: a provider slow to say (the review page streams on meanwhile). */
  | { kind: "delayed"; ms: number; then: Exclude<LookupMode, { kind: "delayed" }> };

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
      const asked = modes.get(key) ?? { kind: "not_found" };
      if (asked.kind === "delayed") setTimeout(() => respond(asked.then), asked.ms);
      else respond(asked);
      function respond(mode: Exclude<LookupMode, { kind: "delayed" }>) {
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
