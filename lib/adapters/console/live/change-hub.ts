import { listenForChanges } from "@/lib/db/client";
import type { ChangeListener } from "@/lib/db/notifications";
import { createHash } from "node:crypto";
import { liveChangeOf, mayReceive, parseAnnouncement, type LiveChange } from "@/lib/model/live/change-events";
import type { Principal } from "@/lib/model/permissions";

/**
 * The fan-out of the change announcements to the console's open streams
 * (docs/live-updates.md): one listener per server process, however many
 * people have pages open, started by the first stream and kept. Each
 * subscriber is handed only what mayReceive allows its person (their own
 * tenant, kinds their role reads), and is told when the listener is lost
 * and back, so its page polls meanwhile and reads afresh after.
 */

export type HubMessage =
  | { type: "change"; change: LiveChange }
  /** live: events arrive; off: the database's switch turned announcements off (pages poll and say why). */
  | { type: "status"; live: boolean; off: boolean }
  /** The subscriber's own session ended. */
  | { type: "ended" };

export interface Subscription {
  /** The person again, re-read (a changed role changes what they are sent). */
  update(principal: Principal): void;
  close(): void;
}

interface Subscriber {
  principal: Principal;
  /** sha256 hex of the console session's id, as the session-end announcement names it. */
  sessionDigest: string;
  send(message: HubMessage): void;
}

function sessionDigestOf(sessionId: string): string {
  return createHash("sha256").update(sessionId, "utf8").digest("hex");
}

class ChangeHub {
  private readonly subscribers = new Set<Subscriber>();
  private listener: ChangeListener | null = null;
  /** Whether the listener is listening now: while it is not, announcements are lost and pages must poll. */
  private listening = false;
  /** The database's switch (lib/db/notifications.ts onSwitch): off, nothing is announced and pages must poll. */
  announcing = true;

  /** Whether a page may wait for events instead of polling. */
  get live(): boolean {
    return this.listening && this.announcing;
  }

  subscribe(session: { principal: Principal; sessionId: string }, send: (message: HubMessage) => void): Subscription {
    const subscriber: Subscriber = {
      principal: session.principal,
      sessionDigest: sessionDigestOf(session.sessionId),
      send,
    };
    this.subscribers.add(subscriber);
    this.start();
    return {
      update: (next) => {
        subscriber.principal = next;
      },
      close: () => {
        this.subscribers.delete(subscriber);
      },
    };
  }

  get size(): number {
    return this.subscribers.size;
  }

  private start(): void {
    if (this.listener) return;
    this.listener = listenForChanges({
      onPayload: (payload) => {
        const event = parseAnnouncement(payload);
        if (!event) return;
        if (event.kind === "session_ended") {
          for (const s of this.subscribers) if (s.sessionDigest === event.sessionDigest) s.send({ type: "ended" });
          return;
        }
        const change = liveChangeOf(event);
        for (const s of this.subscribers) if (mayReceive(s.principal, event)) s.send({ type: "change", change });
      },
      onListening: () => this.setStatus({ listening: true }),
      onLost: () => this.setStatus({ listening: false }),
      // Before onListening when listening starts; on its own when another server's start flips it.
      onSwitch: (on) => this.setStatus({ announcing: on }),
    });
  }

  private setStatus(next: { listening?: boolean; announcing?: boolean }): void {
    const was = { live: this.live, off: !this.announcing };
    this.listening = next.listening ?? this.listening;
    this.announcing = next.announcing ?? this.announcing;
    // A change back to live is sent even when it was live: a reconnect means announcements were lost, read afresh.
    if (next.listening === undefined && was.live === this.live && was.off === !this.announcing) return;
    for (const s of this.subscribers) s.send({ type: "status", live: this.live, off: !this.announcing });
  }
}

// One per process: Next.js may load this module once per bundle (pages, routes), the process holds one hub.
const globalForHub = globalThis as unknown as { verityChangeHub?: ChangeHub };

export function changeHub(): ChangeHub {
  globalForHub.verityChangeHub ??= new ChangeHub();
  return globalForHub.verityChangeHub;
}
