import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Real route handlers (app/…/route.ts) served over real HTTP without a Next
 * server: each request becomes a real Request, its path's `[param]`
 * segments the handler's params, as Next calls it. For tests whose subject
 * is what crosses the wire (headers, status, bodies), with the process-wide
 * database handle pointed at a test database (tests/helpers/route-call.ts
 * serveRoutesFrom).
 */
type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** `["POST", "/api/v1/tasks/[id]/transitions", route.POST]`: the route's file path as Next names it. */
export type ServedRoute = [method: string, path: string, handler: unknown];

export async function serveRouteHandlers(routes: readonly ServedRoute[]): Promise<{
  url: string;
  close: () => Promise<void>;
}> {
  const table = routes.map(([method, path, handler]) => {
    const names: string[] = [];
    const pattern = new RegExp(
      `^${path.replace(/\[([^\]]+)\]/g, (_, name: string) => {
        names.push(name);
        return "([^/]+)";
      })}$`,
    );
    return { method, pattern, names, handler: handler as Handler };
  });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const route = table.find((r) => r.method === req.method && r.pattern.test(url.pathname));
    if (!route) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`no route ${req.method} ${url.pathname}`);
      return;
    }
    const match = route.pattern.exec(url.pathname) ?? [];
    const params = Object.fromEntries(route.names.map((name, i) => [name, decodeURIComponent(match[i + 1] ?? "")]));
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    const response = await route.handler(new Request(url, { method: req.method, headers, body }), {
      params: Promise.resolve(params),
    });
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    res.end(Buffer.from(await response.arrayBuffer()));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(error instanceof Error ? error.stack : String(error));
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
