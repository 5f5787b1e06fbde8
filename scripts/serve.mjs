// @ts-check
/**
 * The production server `npm start` runs (scripts/start.ts): Next.js's own
 * request handler behind a Node HTTP server of ours, so that agents' API
 * requests can skip Next's pipeline (lib/adapters/http/api-router.ts, issue
 * 16 item 3). The router is built inside Next's bundle when the server starts
 * (instrumentation.ts) and published on globalThis: it runs the very route
 * modules, database pools and registries Next's routes use. A request it does
 * not take (pages, the console's session, webhooks, assets) goes to Next.
 *
 * Plain JavaScript, so that the serving process runs no TypeScript loader:
 * everything it serves is Next's compiled output.
 *
 *   PORT, VERITY_HOST           where to listen (set by scripts/start.ts)
 *   VERITY_KEEP_ALIVE_TIMEOUT_MS how long an idle keep-alive socket stays open
 */
import http from "node:http";

process.env.NODE_ENV = "production";
const { default: next } = await import("next");

const port = Number(process.env.PORT ?? 3000);
const hostname = process.env.VERITY_HOST ?? "0.0.0.0";
const app = next({ dev: false, dir: process.cwd(), hostname, port });
const handle = app.getRequestHandler();
await app.prepare();

const routerKey = Symbol.for("verity.apiRouter");
/**
 * Next runs instrumentation.ts's register() once its server is first used,
 * not in prepare(): until then (and were it never published) Next serves the API too.
 * @returns {{ serve(req: http.IncomingMessage, res: http.ServerResponse): boolean } | undefined}
 */
const apiRouter = () => /** @type {any} */ (globalThis)[routerKey];

const server = http.createServer((req, res) => {
  if (apiRouter()?.serve(req, res)) return;
  handle(req, res).catch((error) => {
    console.error(`verity: failed to handle ${req.method} ${req.url}:`, error);
    if (!res.headersSent) res.writeHead(500).end("Internal Server Error");
  });
});
// Node closes idle keep-alive sockets after 5 s; a client reusing one at that
// instant gets ECONNRESET. Idle clients give up well before this, so they close first.
server.keepAliveTimeout = Number(process.env.VERITY_KEEP_ALIVE_TIMEOUT_MS ?? 65_000);
server.on("error", (error) => {
  console.error("verity: the server failed to start:", error);
  process.exit(1);
});
server.listen(port, hostname, () => console.log(`verity: serving on ${hostname}:${port}`));

for (const [signal, code] of /** @type {const} */ ([
  ["SIGINT", 130],
  ["SIGTERM", 143],
])) {
  process.on(signal, () => {
    server.close();
    server.closeIdleConnections();
    void app.close().finally(() => process.exit(code));
  });
}
