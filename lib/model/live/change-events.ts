import { can, type Permission, type Principal } from "@/lib/model/permissions";

/**
 * What a change announcement says (docs/live-updates.md). The database
 * announces every change the console shows from the transaction that makes
 * it (prisma/migrations/…_change_announcements): which tenant, what kind of
 * row, its id, its version where it has one and the task it belongs to.
 * Never the row's data: every server process receives every tenant's
 * announcements, and this module decides who is handed which.
 */

export const changeKinds = ["task", "execution", "review", "alert", "checkpoint", "inbox_claim"] as const;
export type ChangeKind = (typeof changeKinds)[number];

/** One announced change, as the server receives it. */
export interface ChangeEvent {
  tenantId: string;
  kind: ChangeKind;
  id: string;
  version?: number;
  taskId?: string;
}

/** What a browser is sent: the same minus the tenant, which is always the person's own. */
export type LiveChange = Omit<ChangeEvent, "tenantId">;

/** The permission that reads each kind: a person is sent only the kinds whose pages their role may open. */
export const readPermissionOf: Record<ChangeKind, Permission> = {
  task: "tasks:read",
  // The executions list, a task's ledger and the review queue are tasks:read pages.
  execution: "tasks:read",
  review: "tasks:read",
  alert: "alerts:read",
  checkpoint: "checkpoints:read",
  inbox_claim: "inbox:read",
};

function isChangeKind(value: unknown): value is ChangeKind {
  return typeof value === "string" && (changeKinds as readonly string[]).includes(value);
}

/**
 * A console session ended (signed out, its person disabled or re-roled):
 * its open stream closes. Named by the sha256 hex of the session id, never
 * the id; only the server sees it.
 */
export interface SessionEnded {
  kind: "session_ended";
  tenantId: string;
  sessionDigest: string;
}

/**
 * An announcement's payload (`{"t","k","id","v"?,"task"?}`, the triggers'
 * json_build_object), or null for anything else: a payload this version
 * does not know (a newer server's kind during a rolling deploy) is dropped,
 * never guessed at.
 */
export function parseAnnouncement(payload: string): ChangeEvent | SessionEnded | null {
  const event = parseChangePayload(payload);
  if (event) return event;
  try {
    const { t, k, id } = JSON.parse(payload) as Record<string, unknown>;
    if (k === "session_ended" && typeof t === "string" && typeof id === "string")
      return { kind: "session_ended", tenantId: t, sessionDigest: id };
  } catch {
    // Not JSON: dropped below.
  }
  return null;
}

/** A change announcement's payload, or null (a session's end, or anything unknown). */
export function parseChangePayload(payload: string): ChangeEvent | null {
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof body !== "object" || body === null) return null;
  const { t, k, id, v, task } = body as Record<string, unknown>;
  if (typeof t !== "string" || !isChangeKind(k) || typeof id !== "string") return null;
  const event: ChangeEvent = { tenantId: t, kind: k, id };
  if (typeof v === "number" && Number.isInteger(v)) event.version = v;
  if (typeof task === "string") event.taskId = task;
  return event;
}

/** Whether a person may be told of a change: their own tenant's, of a kind their role reads. */
export function mayReceive(principal: Principal, event: ChangeEvent): boolean {
  return event.tenantId === principal.tenantId && can(principal, readPermissionOf[event.kind]);
}

/** The browser's part of an event: the tenant stays on the server. */
export function liveChangeOf({ tenantId: _tenant, ...change }: ChangeEvent): LiveChange {
  return change;
}

/**
 * What a page follows: changes of these kinds, and with `about` only those
 * of that row or of rows belonging to that task (an execution, a review, a
 * checkpoint of the task a page shows).
 */
export interface LiveTopic {
  kinds: readonly ChangeKind[];
  about?: string;
}

export function matchesTopic(topic: LiveTopic, change: LiveChange): boolean {
  if (!topic.kinds.includes(change.kind)) return false;
  return topic.about === undefined || change.id === topic.about || change.taskId === topic.about;
}
