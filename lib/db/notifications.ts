import pg from "pg";
import { childLogger } from "@/lib/config/log";
import type { PrismaClient } from "@/lib/generated/prisma/client";

/**
 * The database's change announcements (docs/live-updates.md): the channel
 * the triggers of prisma/migrations/…_change_announcements notify on, and
 * the one connection per process that listens to it. What a payload means is
 * lib/model/live/change-events.ts's business; this module only delivers it.
 */

export const CHANGES_CHANNEL = "verity_changes";

export interface ChangeListenerHandlers {
  /** One announcement's payload, in commit order. */
  onPayload(payload: string): void;
  /**
   * Listening (again): after a loss, announcements made while it lasted are
   * gone, so whoever shows state must read it afresh.
   */
  onListening?(): void;
  /** The connection was lost; it is being opened again. */
  onLost?(): void;
  /**
   * The database's switch of the announcements (`live_announcements`, read
   * by every announcing trigger): read once listening starts (before
   * onListening) and followed on every change of it, on whichever server it
   * was made. Off: nothing but session ends is announced, so whoever shows
   * state must poll; on again: read afresh, as after a loss.
   */
  onSwitch?(on: boolean): void;
}

/**
 * The switch's own announcement (the migration …_live_switch_and_monitor_heartbeat):
 * `{"k":"announcements","on":…}`, without a tenant. Anything else is a change.
 */
function switchOf(payload: string): boolean | null {
  if (!payload.includes('"announcements"')) return null;
  try {
    const parsed = JSON.parse(payload) as { k?: unknown; on?: unknown; t?: unknown };
    return parsed.k === "announcements" && parsed.t === undefined && typeof parsed.on === "boolean" ? parsed.on : null;
  } catch {
    return null;
  }
}

/** Hands a payload to the switch's handler or the changes' one. */
function deliver(handlers: ChangeListenerHandlers, payload: string): void {
  const on = switchOf(payload);
  if (on === null) handlers.onPayload(payload);
  else handlers.onSwitch?.(on);
}

/** Whether the database announces changes now (the switch's one row; on when it cannot be read, as in a new database). */
export async function readLiveAnnouncements(db: PrismaClient): Promise<boolean> {
  const row = await db.liveAnnouncements.findUnique({ where: { id: true }, select: { enabled: true } });
  return row?.enabled ?? true;
}

/**
 * A server's start (scripts/start.ts) with VERITY_LIVE_UPDATES set writes
 * it to the database's switch, on the owner's connection (the tenants'
 * roles may only read it). One row decides for every server on the
 * database, and its change is announced to all of their listeners, so they
 * never disagree at run time; between two servers configured differently,
 * the one started last decides, and its start says so (`changed`).
 * Unset: the switch stays as the database has it. A single-row UPDATE:
 * a crash leaves the old value or the new one.
 */
export async function applyLiveUpdatesSetting(
  platformDb: PrismaClient,
  wanted: "on" | "off" | undefined,
): Promise<{ on: boolean; changed: boolean }> {
  if (wanted === undefined) return { on: await readLiveAnnouncements(platformDb), changed: false };
  const on = wanted === "on";
  const { count } = await platformDb.liveAnnouncements.updateMany({
    where: { id: true, enabled: !on },
    data: { enabled: on, updatedAt: new Date() },
  });
  return { on, changed: count > 0 };
}

export interface ChangeListener {
  close(): Promise<void>;
}

/**
 * PostgreSQL: one dedicated client, never a pooled one (a pool hands its
 * connections to other work and closes idle ones; LISTEN belongs to one
 * session for its whole life). It runs as the owner, whose connection
 * receives every tenant's announcements: they name rows, not data, and the
 * fan-out filters them per person. A lost connection (a restart, a failover,
 * pg_terminate_backend) is opened again after a back-off that grows to
 * `maxRetryMs`; onLost and then onListening say so.
 */
export function listenOnPostgres(
  url: string,
  handlers: ChangeListenerHandlers,
  options: { retryMs?: number; maxRetryMs?: number } = {},
): ChangeListener {
  const log = childLogger("db");
  const firstRetryMs = options.retryMs ?? 250;
  const maxRetryMs = options.maxRetryMs ?? 5_000;
  let retryMs = firstRetryMs;
  let closed = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    retry = null;
    if (closed) return;
    const c = new pg.Client({ connectionString: url, keepAlive: true, application_name: "verity-listener" });
    client = c;
    let lost = false;
    const onLoss = (error?: Error) => {
      if (lost || closed) return;
      lost = true;
      client = null;
      c.removeAllListeners("notification");
      // A failed client is spent: end it (errors ignored) and open another.
      c.end().catch(() => undefined);
      log.warn({ reason: error?.message }, "the change listener lost its database connection; reconnecting");
      handlers.onLost?.();
      retry = setTimeout(() => void connect(), retryMs);
      retryMs = Math.min(retryMs * 2, maxRetryMs);
    };
    c.on("error", onLoss);
    c.on("end", () => onLoss());
    c.on("notification", (message) => {
      if (message.channel === CHANGES_CHANNEL && message.payload !== undefined) deliver(handlers, message.payload);
    });
    let on: boolean;
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANGES_CHANNEL}`);
      // After LISTEN, on the same session: a change of the switch from here on is also heard.
      const switched = await c.query<{ on: boolean }>(`SELECT verity_announcing() AS "on"`);
      on = switched.rows[0]?.on ?? true;
    } catch (error) {
      onLoss(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (closed) {
      await c.end().catch(() => undefined);
      return;
    }
    retryMs = firstRetryMs;
    handlers.onSwitch?.(on);
    handlers.onListening?.();
  };
  void connect();

  return {
    close: async () => {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners();
        c.on("error", () => undefined);
        await c.end().catch(() => undefined);
      }
    },
  };
}

/** Whatever can LISTEN in process: the embedded database's one session (lib/db/tenant-sessions.ts `listen`). */
export interface InProcessListen {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/**
 * The embedded database: PGlite is in this process and delivers a
 * notification when the statement that commits returns, so the connection
 * cannot be lost; onListening is called once LISTEN has run and the switch
 * (`readSwitch`, on the same queued session after LISTEN) has been read.
 */
export function listenInProcess(
  db: InProcessListen,
  handlers: ChangeListenerHandlers,
  readSwitch: () => Promise<boolean>,
): ChangeListener {
  const stop = db
    .listen(CHANGES_CHANNEL, (payload) => deliver(handlers, payload))
    .then(async (unlisten) => {
      handlers.onSwitch?.(await readSwitch().catch(() => true));
      handlers.onListening?.();
      return unlisten;
    });
  stop.catch((error: unknown) =>
    childLogger("db").error({ err: error }, "the embedded database refused LISTEN: live updates fall back to polling"),
  );
  return {
    close: async () => {
      const unlisten = await stop.catch(() => null);
      await unlisten?.().catch(() => undefined);
    },
  };
}
