import pg from "pg";
import { childLogger } from "@/lib/config/log";

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
      if (message.channel === CHANGES_CHANNEL && message.payload !== undefined) handlers.onPayload(message.payload);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      onLoss(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (closed) {
      await c.end().catch(() => undefined);
      return;
    }
    retryMs = firstRetryMs;
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
 * cannot be lost; onListening is called once LISTEN has run.
 */
export function listenInProcess(db: InProcessListen, handlers: ChangeListenerHandlers): ChangeListener {
  const stop = db
    .listen(CHANGES_CHANNEL, (payload) => handlers.onPayload(payload))
    .then((unlisten) => {
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
