import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ConnectorDeps } from "@/lib/connectors/effects";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { taskResource, transitionResource } from "@/lib/adapters/api/task-resources";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { isVerityApiError, type RecordIntentBody, type RecordOutcomeBody } from "@/sdk";
import { api, engineLedger } from "@/tests/sdk/engine-ledger";

/**
 * The /api/v1 routes an agent's run needs — the execution ledger's five,
 * task creation and transitions — served over real HTTP by the engine on a
 * test database (tests/sdk/engine-ledger.ts: the routes' own engine
 * functions, serializers and problem mapping), so an unmodified
 * VerityClient — in this process or in a child process that a test
 * SIGKILLs — drives the real engine without a Next server. Every request
 * acts as `actor` (the routes' bearer check is not what these tests are
 * about); any other path is a 404 problem.
 */
export async function serveEngineApi(
  db: Db,
  actor: Actor,
  options: { deps: ConnectorDeps },
): Promise<{ url: string; close: () => Promise<void> }> {
  const ledger = engineLedger(db, actor, { deps: options.deps });
  const routes: Array<[method: string, path: RegExp, answer: (id: string, body: unknown) => Promise<unknown>]> = [
    [
      "POST",
      /^\/api\/v1\/tasks()$/,
      (_, body) => api(async () => taskResource((await createTask(db, body, actor)).task)),
    ],
    [
      "POST",
      /^\/api\/v1\/tasks\/([^/]+)\/transitions$/,
      (id, body) =>
        api(async () => {
          const result = await transitionTask(db, id, body, actor);
          return {
            task: taskResource(result.task),
            transition: transitionResource(result.transition),
            replayed: result.replayed,
          };
        }),
    ],
    ["GET", /^\/api\/v1\/tasks\/([^/]+)$/, (id) => ledger.getTask(id)],
    [
      "POST",
      /^\/api\/v1\/tasks\/([^/]+)\/executions$/,
      (id, body) => ledger.recordIntent(id, body as RecordIntentBody),
    ],
    ["GET", /^\/api\/v1\/executions\/([^/]+)$/, (id) => ledger.getExecution(id)],
    [
      "POST",
      /^\/api\/v1\/executions\/([^/]+)\/sent$/,
      (id, body) => {
        const b = body as { attempt_id: string; fencing_token?: string };
        return ledger.markSent(id, b.attempt_id, b.fencing_token);
      },
    ],
    [
      "POST",
      /^\/api\/v1\/executions\/([^/]+)\/outcome$/,
      (id, body) => ledger.recordOutcome(id, body as RecordOutcomeBody),
    ],
  ];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://engine").pathname;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    for (const [method, pattern, answer] of routes) {
      const match = pattern.exec(path);
      if (req.method !== method || !match) continue;
      try {
        const value = await answer(decodeURIComponent(match[1] ?? ""), text ? JSON.parse(text) : undefined);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
      } catch (error) {
        if (!isVerityApiError(error)) throw error;
        res.writeHead(error.status, { "content-type": "application/problem+json" }).end(JSON.stringify(error.problem));
      }
      return;
    }
    res
      .writeHead(404, { "content-type": "application/problem+json" })
      .end(JSON.stringify({ type: "about:blank", title: "Not found", status: 404, detail: `${req.method} ${path}` }));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const detail = error instanceof Error ? error.message : String(error);
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/problem+json" });
      res.end(JSON.stringify({ type: "about:blank", title: "Internal error", status: 500, detail }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
