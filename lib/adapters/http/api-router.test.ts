import http from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiRouter, type ApiRoute } from "@/lib/adapters/http/api-router";
import { readJsonBody } from "@/lib/adapters/http/body";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";
import { apiContentSecurityPolicy, staticSecurityHeaders } from "@/lib/adapters/http/security-headers";
import { AppError } from "@/lib/core/errors";

type Context = { params: Promise<Record<string, string | string[]>> };

/** Each handler says which route answered and with which params, so the test sees the router's choice. */
const answering = (route: string) =>
  withProblems(async (request: Request, { params }: Context) =>
    json({ route, params: await params, method: request.method, url: request.url }),
  );

const routes: ApiRoute[] = [
  { template: "/api/v1/[...path]", module: { GET: answering("[...path]"), POST: answering("[...path]") } },
  {
    template: "/api/v1/tasks",
    module: { ...otherMethods(["GET"]), GET: answering("tasks"), dynamic: "force-dynamic" },
  },
  { template: "/api/v1/tasks/[id]", module: { GET: answering("tasks/[id]") } },
  {
    template: "/api/v1/tasks/[id]/transitions",
    module: {
      POST: withProblems(async (request: Request, { params }: Context) =>
        json({
          route: "tasks/[id]/transitions",
          id: (await params).id,
          body: await readJsonBody(request, { maxBytes: 200_000 }),
        }),
      ),
    },
  },
  { template: "/api/v1/workflows/[name]", module: { GET: answering("workflows/[name]") } },
  { template: "/api/v1/workflows/migrations", module: { GET: answering("workflows/migrations") } },
  {
    template: "/api/v1/export",
    module: {
      GET: withProblems(async () => {
        const lines = ["a,b\n", "1,2\n", "3,4\n"];
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            const line = lines.shift();
            if (line === undefined) controller.close();
            else controller.enqueue(new TextEncoder().encode(line));
          },
        });
        return new Response(body, { headers: { "Content-Type": "text/csv" } });
      }),
    },
  },
  {
    template: "/api/v1/refused",
    module: {
      GET: withProblems(async () => {
        throw new AppError("forbidden", "not yours");
      }),
      // Outside withProblems: the router's own boundary answers.
      POST: async () => {
        throw new Error("a handler that forgot withProblems");
      },
    },
  },
];

let server: http.Server;
let base: string;

beforeAll(async () => {
  const router = createApiRouter(routes, { prefix: "/api/v1/" });
  // A request the router leaves is Next's: 599 here, so a test sees which side answered.
  server = http.createServer((req, res) => {
    if (!router.serve(req, res)) res.writeHead(599).end("next");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const bearer = { authorization: "Bearer t" };

/** Raw paths (fetch and http.get's URL would normalise `..` and `//` before sending). */
function rawGet(pathname: string, headers: Record<string, string> = bearer): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    http
      .request({ host: hostname, port, path: pathname, headers }, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", reject)
      .end();
  });
}

describe("the API router", () => {
  it("takes only requests that carry Authorization: the console's session and webhooks stay Next's", async () => {
    expect((await fetch(`${base}/api/v1/tasks`)).status).toBe(599);
    expect((await fetch(`${base}/api/v1/tasks`, { headers: { cookie: "session=x" } })).status).toBe(599);
    const taken = await fetch(`${base}/api/v1/tasks`, { headers: bearer });
    expect(taken.status).toBe(200);
    expect(await taken.json()).toMatchObject({ route: "tasks", method: "GET", url: `${base}/api/v1/tasks` });
  });

  it("leaves paths outside its prefix, and methods no route exports, to Next", async () => {
    expect((await fetch(`${base}/api/console/events`, { headers: bearer })).status).toBe(599);
    expect((await fetch(`${base}/dashboard`, { headers: bearer })).status).toBe(599);
    expect((await fetch(`${base}/api/v1/tasks`, { method: "HEAD", headers: bearer })).status).toBe(599);
    expect((await fetch(`${base}/api/v1/tasks`, { method: "OPTIONS", headers: bearer })).status).toBe(599);
    // tasks/[id] exports GET only: a DELETE there is not the catch-all's either (Next answers its 405).
    expect((await fetch(`${base}/api/v1/tasks/t1`, { method: "DELETE", headers: bearer })).status).toBe(599);
  });

  it("serves a method the route answers with otherMethods, as Next would: 405 problem+json with Allow", async () => {
    const response = await fetch(`${base}/api/v1/tasks`, { method: "PUT", headers: bearer });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET");
    expect(response.headers.get("content-type")).toContain("application/problem+json");
  });

  it("chooses as Next does: a static segment over a [param], a [param] over a [...catch-all]", async () => {
    const route = async (pathname: string) =>
      (await (await fetch(`${base}${pathname}`, { headers: bearer })).json()) as { route: string; params: unknown };
    expect(await route("/api/v1/workflows/migrations")).toMatchObject({ route: "workflows/migrations" });
    expect(await route("/api/v1/workflows/delivery")).toMatchObject({
      route: "workflows/[name]",
      params: { name: "delivery" },
    });
    expect(await route("/api/v1/tasks/t1")).toMatchObject({ route: "tasks/[id]", params: { id: "t1" } });
    expect(await route("/api/v1/no/such/thing")).toMatchObject({
      route: "[...path]",
      params: { path: ["no", "such", "thing"] },
    });
    expect(await route("/api/v1/tasks/t1/nothing")).toMatchObject({ route: "[...path]" });
  });

  it("decodes params as Next does, and leaves to Next a path it would normalise or redirect", async () => {
    const decoded = await fetch(`${base}/api/v1/tasks/a%2Fb%20c?x=1`, { headers: bearer });
    expect(await decoded.json()).toMatchObject({ route: "tasks/[id]", params: { id: "a/b c" } });
    for (const pathname of [
      "/api/v1/tasks/",
      "/api/v1//tasks",
      "/api/v1/tasks/../tools",
      "/api/v1/tasks/./x",
      "/api/v1/tasks/%E0%A4%A",
    ])
      expect((await rawGet(pathname)).status, pathname).toBe(599);
  });

  it("adds the security headers proxy.ts gives every API response, and HSTS behind a proxy that says https", async () => {
    const plain = await fetch(`${base}/api/v1/tasks`, { headers: bearer });
    expect(plain.headers.get("content-security-policy")).toBe(apiContentSecurityPolicy);
    for (const [name, value] of Object.entries(staticSecurityHeaders))
      expect(plain.headers.get(name), name).toBe(value);
    expect(plain.headers.get("strict-transport-security")).toBeNull();
    expect(plain.headers.get("cache-control")).toBe("no-store");
    expect(plain.headers.get("connection")).toBe("keep-alive");
    const https = await fetch(`${base}/api/v1/tasks`, { headers: { ...bearer, "x-forwarded-proto": "https" } });
    expect(https.headers.get("strict-transport-security")).toBe("max-age=31536000");
  });

  it("sends a JSON answer whole with its length, and streams any other body as it comes", async () => {
    const whole = await fetch(`${base}/api/v1/tasks`, { headers: bearer });
    const text = await whole.text();
    expect(whole.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    const streamed = await fetch(`${base}/api/v1/export`, { headers: bearer });
    expect(streamed.headers.get("content-length")).toBeNull();
    expect(streamed.headers.get("transfer-encoding")).toBe("chunked");
    expect(await streamed.text()).toBe("a,b\n1,2\n3,4\n");
  });

  it("gives the handler the body, a large one streamed under the handler's own limit", async () => {
    const post = (body: string) =>
      fetch(`${base}/api/v1/tasks/t1/transitions`, {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body,
      });
    const small = await post(JSON.stringify({ to: "RUNNING" }));
    expect(small.headers.get("connection")).toBe("keep-alive");
    expect(await small.json()).toEqual({ route: "tasks/[id]/transitions", id: "t1", body: { to: "RUNNING" } });
    // Past the 64 KiB read whole, under the handler's 200,000 bytes: streamed, and read in full.
    const large = { note: "x".repeat(150_000) };
    expect(await (await post(JSON.stringify(large))).json()).toMatchObject({ body: large });
    const tooLarge = await post(JSON.stringify({ note: "x".repeat(300_000) }));
    expect(tooLarge.status).toBe(413);
    // The rest of that body was never read: the connection closes rather than read it as the next request.
    expect(tooLarge.headers.get("connection")).toBe("close");
    expect(tooLarge.headers.get("content-type")).toContain("application/problem+json");
    const empty = await fetch(`${base}/api/v1/tasks/t1/transitions`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
    });
    expect(empty.status).toBe(400);
  });

  it("survives a client that goes away halfway through a streamed body, and answers the next request", async () => {
    const { hostname, port } = new URL(base);
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: hostname,
        port,
        path: "/api/v1/tasks/t1/transitions",
        method: "POST",
        headers: { ...bearer, "content-type": "application/json", "content-length": "150000" },
      });
      req.on("error", () => resolve());
      req.write(`{"note":"${"x".repeat(80_000)}`);
      setImmediate(() => {
        req.destroy();
        resolve();
      });
    });
    const next = await fetch(`${base}/api/v1/tasks`, { headers: bearer });
    expect(next.status).toBe(200);
  });

  it("answers what a handler throws as problem+json: its own boundary's, or the router's for a handler without one", async () => {
    const refused = await fetch(`${base}/api/v1/refused`, { headers: bearer });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ status: 403, detail: "not yours" });
    const broken = await fetch(`${base}/api/v1/refused`, { method: "POST", headers: bearer });
    expect(broken.status).toBe(500);
    expect(broken.headers.get("content-type")).toContain("application/problem+json");
    expect(broken.headers.get("content-security-policy")).toBe(apiContentSecurityPolicy);
  });
});

describe("app/api/v1/routes.ts", () => {
  it("lists every route under app/api/v1, by the template its folder spells", () => {
    const root = path.join(process.cwd(), "app", "api", "v1");
    const onDisk: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.name === "route.ts")
          onDisk.push(`/api/v1/${path.relative(root, dir).split(path.sep).join("/")}`.replace(/\/$/, ""));
      }
    };
    walk(root);
    const table = readFileSync(path.join(root, "routes.ts"), "utf8");
    const listed = [...table.matchAll(/\{ template: "([^"]+)", module: (\w+) \}/g)].map((m) => m[1]!);
    expect(listed.sort()).toEqual(onDisk.sort());
    // Each template names the module of its own folder.
    for (const match of table.matchAll(/import \* as (\w+) from "@\/app\/api\/v1\/(.+)\/route";/g)) {
      expect(table).toContain(`{ template: "/api/v1/${match[2]}", module: ${match[1]} }`);
      expect(existsSync(path.join(root, match[2]!, "route.ts"))).toBe(true);
    }
  });
});
