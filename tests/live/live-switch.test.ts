import path from "node:path";
import { rmSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoAgent, demoUsers } from "@/lib/config/demo-accounts";
import { createEmptyPostgresDatabase } from "@/tests/helpers/postgres";
import { signInOverHttp } from "@/tests/helpers/http-sign-in";
import { livePort, startVerityServer, type VerityServer } from "./servers";

/**
 * The switch of the live announcements with two servers on one database
 * (docs/live-updates.md, docs/scale-out.md): the database decides, the last
 * server started decides the database, and every server's open streams
 * follow at once. A is started with announcements on and a person's stream
 * open on it; B starts with VERITY_LIVE_UPDATES=off and A's stream says so;
 * a task created meanwhile is not announced; turned on again (in the
 * database, as an operator would), A's stream is live and announces the next.
 */
const root = path.resolve(import.meta.dirname, "../..");
const workDir = path.join(root, ".data", "live-switch");
let database: { url: string; drop(): Promise<void> };
const servers: VerityServer[] = [];

interface SseEvent {
  event: string;
  data: unknown;
}

/** A person's `/api/console/events` read as it arrives. */
async function openStream(baseUrl: string, cookie: string) {
  const abort = new AbortController();
  const res = await fetch(`${baseUrl}/api/console/events`, { headers: { cookie }, signal: abort.signal });
  expect(res.status).toBe(200);
  const events: SseEvent[] = [];
  let wake: () => void = () => undefined;
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const name = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (name && data) events.push({ event: name, data: JSON.parse(data) });
          wake();
        }
      }
    } catch {
      // aborted at the end
    }
  })();
  return {
    events,
    /** The first event from `from` on that matches, as soon as it arrived. */
    async next(match: (e: SseEvent) => boolean, from = 0, timeoutMs = 60_000): Promise<SseEvent> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.slice(from).find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no matching event; got ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 500);
        });
      }
    },
    close: () => abort.abort(),
  };
}

const createTask = async (baseUrl: string, id: string) => {
  const res = await fetch(`${baseUrl}/api/v1/tasks`, {
    method: "POST",
    headers: { authorization: `Bearer ${demoAgent.token}`, "content-type": "application/json" },
    body: JSON.stringify({ workflow: "agent-task", task_id: id, intent_id: `intent-${id}` }),
  });
  expect(res.status, await res.text()).toBe(201);
};

beforeAll(async () => {
  rmSync(workDir, { recursive: true, force: true });
  database = await createEmptyPostgresDatabase();
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await database?.drop().catch(() => undefined);
  rmSync(workDir, { recursive: true, force: true });
}, 120_000);

const start = async (label: string, offset: number, liveUpdates: "on" | "off") => {
  const server = await startVerityServer({
    label,
    port: livePort(offset),
    dataDir: path.join(workDir, label),
    env: {
      DATABASE_URL: database.url,
      SANDBOX_PORT: String(livePort(offset + 1)),
      VERITY_LIVE_UPDATES: liveUpdates,
    },
  });
  servers.push(server);
  return server;
};

describe("the live announcements' switch, two servers on one database", () => {
  it("the last server started decides, every server's streams follow, and off announces nothing", async () => {
    const a = await start("a", 30, "on");
    const operator = demoUsers.find((u) => u.username === "operator")!;
    const stream = await openStream(a.baseUrl, await signInOverHttp(a.baseUrl, operator));
    try {
      await stream.next((e) => e.event === "status" && (e.data as { live: boolean }).live);

      // B starts with announcements off: its start turns them off for A too.
      const from = stream.events.length;
      await start("b", 32, "off");
      expect(await stream.next((e) => e.event === "status", from)).toEqual({
        event: "status",
        data: { live: false, off: true },
      });

      const run = Date.now().toString(36);
      const unannounced = `switch-off-${run}`;
      await createTask(a.baseUrl, unannounced);
      // On again in the database, as an operator would (or a server started with "on").
      const owner = new pg.Client({ connectionString: database.url });
      await owner.connect();
      try {
        const beforeOn = stream.events.length;
        await owner.query("UPDATE live_announcements SET enabled = true");
        await stream.next((e) => e.event === "status" && (e.data as { live: boolean }).live, beforeOn);
      } finally {
        await owner.end();
      }
      const announced = `switch-on-${run}`;
      await createTask(a.baseUrl, announced);
      await stream.next((e) => e.event === "change" && (e.data as { id: string }).id === announced);
      // In commit order: the task made while off would have come before the switch's "on".
      expect(
        stream.events.filter((e) => e.event === "change" && (e.data as { id: string }).id === unannounced),
      ).toEqual([]);
    } finally {
      stream.close();
    }
  }, 900_000);
});
