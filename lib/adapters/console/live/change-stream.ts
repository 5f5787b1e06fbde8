import { checkSession } from "@/lib/adapters/auth/session-check";
import { getConsoleSession } from "@/lib/adapters/auth/session";
import { requireActiveTenant } from "@/lib/adapters/auth/tenant-standing";
import { changeHub, type HubMessage } from "@/lib/adapters/console/live/change-hub";
import { AppError } from "@/lib/core/errors";
import { getPlatformDb } from "@/lib/db/client";
import type { Principal } from "@/lib/model/permissions";

/**
 * A signed-in person's stream of change events (`GET /api/console/events`,
 * text/event-stream; docs/live-updates.md). Events:
 *
 * - `status` `{"live": true|false, "off": true|false}`: first, and whenever
 *   the server's listener is lost or back or the database's switch turns
 *   announcements off or on (`off`: the operators turned them off, not a
 *   fault). While not live, pages poll; on live they read their state
 *   afresh (announcements made meanwhile are gone).
 * - `change` `{"kind","id","version"?,"taskId"?}`: a row of the person's
 *   tenant, of a kind their role reads, changed and committed.
 * - `ended` `{"detail"}`: the session ended (signed out, disabled, past its
 *   lifetime, the tenant suspended); the stream closes and the page says so.
 *   A sign-out or a disable is announced by the database and ends the stream
 *   at once; the rest is found by the heartbeat's re-read.
 *
 * A comment line every `heartbeatMs` keeps proxies from closing an idle
 * stream, and each heartbeat re-reads the session (one query per person per
 * heartbeat, where polling made several per page every 3 s), so a sign-out
 * or a role change reaches an open stream within one period.
 */
export async function openChangeStream(signal: AbortSignal, options: { heartbeatMs?: number } = {}): Promise<Response> {
  const session = await getConsoleSession();
  if (!session || session.passwordMustChange)
    throw new AppError("unauthenticated", "Your session has ended: sign in again.");
  const { sessionId } = session;
  let principal = session.principal;
  const heartbeatMs = options.heartbeatMs ?? 20_000;
  const encoder = new TextEncoder();
  const hub = changeHub();

  let finish: () => void = () => undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const write = (text: string) => {
        if (!open) return;
        // A reader that stopped reading (a frozen tab, a stalled proxy): drop it rather than
        // queue without bound; its EventSource reconnects and reads the page afresh.
        if (controller.desiredSize !== null && controller.desiredSize < -256) {
          finish();
          return;
        }
        controller.enqueue(encoder.encode(text));
      };
      const event = (name: string, data: unknown) => write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
      const onMessage = (message: HubMessage) => {
        switch (message.type) {
          case "change":
            event("change", message.change);
            break;
          case "status":
            event("status", { live: message.live, off: message.off });
            break;
          case "ended":
            event("ended", { detail: "Your session has ended: sign in again." });
            finish();
            break;
        }
      };
      const subscription = hub.subscribe({ principal, sessionId }, onMessage);

      const recheck = async () => {
        const next = await stillSignedIn(sessionId, principal);
        if (!open) return;
        if (typeof next === "string") {
          event("ended", { detail: next });
          finish();
          return;
        }
        principal = next;
        subscription.update(next);
        write(": heartbeat\n\n");
      };
      const heartbeat = setInterval(() => void recheck().catch(() => finish()), heartbeatMs);

      finish = () => {
        if (!open) return;
        open = false;
        clearInterval(heartbeat);
        subscription.close();
        signal.removeEventListener("abort", finish);
        try {
          controller.close();
        } catch {
          // Already closed by the reader's cancel.
        }
      };
      signal.addEventListener("abort", finish);
      // How soon to reconnect after a drop, then where the listener stands now.
      write("retry: 2000\n\n");
      event("status", { live: hub.live, off: !hub.announcing });
    },
    cancel() {
      finish();
    },
  });
  return new Response(body, {
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      // no-transform: no compression or buffering on the way, every event is sent as it happens.
      "Cache-Control": "no-store, no-transform",
      "X-Accel-Buffering": "no",
    },
  });
}

/** The person as the session stands now, or why it does not. */
async function stillSignedIn(sessionId: string, principal: Principal): Promise<Principal | string> {
  const { principal: now, passwordMustChange } = await checkSession(getPlatformDb(), {
    sessionId,
    userId: principal.id,
  });
  if (!now || now.kind !== "user" || passwordMustChange) return "Your session has ended: sign in again.";
  try {
    await requireActiveTenant(now);
  } catch (error) {
    return error instanceof Error ? error.message : "Your tenant is not active.";
  }
  return now;
}
