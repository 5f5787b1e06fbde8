import type { Db } from "@/lib/db/client";
import type { Principal } from "@/lib/model/permissions";
import { describeAlertKind } from "@/lib/model/alerts/alert-kinds";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { TaskStateSchema } from "@/lib/model/tasks/task-state";
import { gatesAwaiting, inboxKindsFor, type InboxItem, type InboxKind } from "@/lib/model/inbox/inbox-items";
import { findInboxClaims, unclaimed } from "@/lib/stores/inbox-claims";
import { undecidedStatuses } from "@/lib/stores/review-store";
import { listWorkflowVersionViews, loadWorkflowDefinitions } from "@/lib/stores/workflow-registry";
import { listReviews } from "@/lib/use-cases/reviews/list-reviews";
import { isNeverSent } from "@/lib/use-cases/reviews/review-views";

/**
 * Everything waiting on a person, in one list (docs/inbox.md): undecided
 * reviews of frozen actions (approval requests included), tasks escalated to
 * WAITING_FOR_HUMAN with no undecided review (the agent handed them over with
 * no call to decide), human gates a way forward needs, and alerts still open
 * or escalated. Run on the caller's tenant connection (row-level security
 * keeps it to the tenant) and filtered by what the principal may act on:
 * an auditor's inbox is empty, an engineer's holds the gates an engineer
 * sets and the alerts, an operator's the reviews, escalations, the
 * operator's gates and the alerts. Each item carries its claim.
 */

/** Past any inbox a person works through by hand; the oldest come first. */
const perKindLimit = 500;

type Gathered = Omit<InboxItem, "claim">;

/** A reason as a sentence, so that what follows it reads as the next one. */
function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?…]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

async function reviewItems(db: Db): Promise<{ items: Gathered[]; taskIds: Set<string> }> {
  const lists = await Promise.all(undecidedStatuses.map((status) => listReviews(db, { status, limit: perKindLimit })));
  const reviews = lists.flat();
  const items = reviews.map((r): Gathered => {
    const neverSent = isNeverSent(r.execution);
    const flagged = r.status === "ESCALATED" ? " Escalated for someone more senior." : "";
    const approvals =
      r.requiredApprovals > 1 ? ` ${r.approvals} of ${r.requiredApprovals} approvals so far (four eyes).` : "";
    return {
      key: `review:${r.id}`,
      kind: "review",
      what: neverSent
        ? `Approval request: ${r.execution.tool}, held before it was sent`
        : `Frozen ${r.execution.tool}: outcome unknown`,
      why: `${sentence(r.reason)}${flagged}${approvals}`,
      href: `/reviews/${encodeURIComponent(r.id)}`,
      taskId: r.taskId,
      executionId: r.executionId,
      amountMinor: r.amountCents,
      currency: r.currency,
      since: r.createdAt,
    };
  });
  return { items, taskIds: new Set(reviews.map((r) => r.taskId)) };
}

/** When each task entered its current status: the newest transition into it from another one (or its creation). */
async function enteredAt(db: Db, tasks: ReadonlyArray<{ id: string; status: string; updatedAt: Date }>) {
  if (tasks.length === 0) return new Map<string, { at: Date; reason: string | null }>();
  const rows = await db.transition.findMany({
    // Only the moves into the statuses the tasks are in now: a long history is not read whole.
    where: { taskId: { in: tasks.map((t) => t.id) }, toStatus: { in: [...new Set(tasks.map((t) => t.status))] } },
    select: { taskId: true, fromStatus: true, toStatus: true, reason: true, createdAt: true },
    orderBy: { toVersion: "asc" },
  });
  const entered = new Map<string, { at: Date; reason: string | null }>();
  const statusOf = new Map(tasks.map((t) => [t.id, t.status]));
  for (const r of rows)
    if (r.toStatus === statusOf.get(r.taskId) && r.fromStatus !== r.toStatus)
      entered.set(r.taskId, { at: r.createdAt, reason: r.reason });
  for (const t of tasks) if (!entered.has(t.id)) entered.set(t.id, { at: t.updatedAt, reason: null });
  return entered;
}

async function escalatedTaskItems(db: Db, reviewedTaskIds: ReadonlySet<string>): Promise<Gathered[]> {
  const rows = await db.task.findMany({
    where: { status: "WAITING_FOR_HUMAN" },
    select: { id: true, status: true, intentId: true, workflowName: true, updatedAt: true },
    orderBy: [{ updatedAt: "asc" }, { id: "asc" }],
    take: perKindLimit,
  });
  // A task whose review is undecided is in the list as that review: deciding it moves the task.
  const tasks = rows.filter((t) => !reviewedTaskIds.has(t.id));
  const entered = await enteredAt(db, tasks);
  return tasks.map((t): Gathered => {
    const at = entered.get(t.id);
    return {
      key: `task:${t.id}`,
      kind: "escalated_task",
      what: `${t.intentId} (${t.workflowName}) escalated to a person`,
      why: at?.reason
        ? `The agent handed it over: “${at.reason}”. No frozen call to decide: resolve or cancel it on the task page.`
        : "Waiting for a person, with no frozen call to decide: resolve or cancel it on the task page.",
      href: `/tasks/${encodeURIComponent(t.id)}`,
      taskId: t.id,
      executionId: null,
      amountMinor: null,
      currency: null,
      since: at?.at ?? t.updatedAt,
    };
  });
}

async function gateItems(db: Db, principal: Pick<Principal, "role">): Promise<Gathered[]> {
  // Which (definition, status) pairs can wait on a gate at all: found from the registry's definitions (a
  // few rows), then only those tasks read. Grouping the tasks table to find them cost a scan of every task
  // (docs/cost-growth.md).
  const digests = (await listWorkflowVersionViews(db)).map((v) => v.digest);
  await loadWorkflowDefinitions(db, digests);
  const waiting = digests.flatMap((workflowDigest) => {
    const def = getWorkflowByDigest(workflowDigest);
    if (!def) return [];
    return Object.keys(def.states)
      .filter((status) => gatesAwaiting(def, status, {}, principal.role).length > 0)
      .map((status) => ({ workflowDigest, status }));
  });
  if (waiting.length === 0) return [];
  const tasks = await db.task.findMany({
    where: { OR: waiting.map((g) => ({ workflowDigest: g.workflowDigest, status: g.status })) },
    select: {
      id: true,
      status: true,
      intentId: true,
      workflowName: true,
      workflowDigest: true,
      state: true,
      updatedAt: true,
    },
    orderBy: [{ updatedAt: "asc" }, { id: "asc" }],
    take: perKindLimit,
  });
  const entered = await enteredAt(db, tasks);
  return tasks.flatMap((t) => {
    const def = getWorkflowByDigest(t.workflowDigest);
    const state = TaskStateSchema.safeParse(t.state);
    if (!def || !state.success) return [];
    return gatesAwaiting(def, t.status, state.data.gates, principal.role).map((gate): Gathered => ({
      key: `gate:${t.id}:${gate}`,
      kind: "gate",
      what: `${gate} on ${t.intentId} (${t.workflowName})`,
      why: `${def.gates?.[gate]?.description ?? "A person's approval."} The task cannot leave ${t.status} without it.`,
      href: `/tasks/${encodeURIComponent(t.id)}#gate-approvals-heading`,
      taskId: t.id,
      executionId: null,
      amountMinor: null,
      currency: null,
      since: entered.get(t.id)?.at ?? t.updatedAt,
    }));
  });
}

async function alertItems(db: Db): Promise<Gathered[]> {
  const alerts = await db.divergenceAlert.findMany({
    where: { status: { in: ["OPEN", "ESCALATED"] } },
    select: { id: true, kind: true, severity: true, status: true, message: true, taskId: true, createdAt: true },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: perKindLimit,
  });
  return alerts.map((a): Gathered => ({
    key: `alert:${a.id}`,
    kind: "alert",
    what: `${describeAlertKind(a.kind)} (${a.severity}${a.status === "ESCALATED" ? ", escalated" : ""})`,
    why: `${a.message} Reconcile, acknowledge or escalate it.`,
    href: `/alerts/${encodeURIComponent(a.id)}`,
    taskId: a.taskId || null,
    executionId: null,
    amountMinor: null,
    currency: null,
    since: a.createdAt,
  }));
}

/** The principal's inbox, every kind it may act on, each item with its claim; unsorted (selectInboxItems orders it). */
export async function gatherInbox(db: Db, principal: Pick<Principal, "role" | "kind">): Promise<InboxItem[]> {
  const kinds = new Set<InboxKind>(inboxKindsFor(principal));
  // Escalated tasks are told apart from reviews by their tasks: the reviews are read for either.
  const reviews = kinds.has("review") || kinds.has("escalated_task") ? await reviewItems(db) : null;
  const [escalated, gates, alerts] = await Promise.all([
    kinds.has("escalated_task") ? escalatedTaskItems(db, reviews?.taskIds ?? new Set()) : [],
    kinds.has("gate") ? gateItems(db, principal) : [],
    kinds.has("alert") ? alertItems(db) : [],
  ]);
  const gathered = [...(kinds.has("review") ? (reviews?.items ?? []) : []), ...escalated, ...gates, ...alerts];
  const claims = await findInboxClaims(
    db,
    gathered.map((i) => i.key),
  );
  return gathered.map((item) => {
    const claim = claims.get(item.key) ?? unclaimed(item.key);
    return { ...item, claim: { claimedBy: claim.claimedBy, claimedAt: claim.claimedAt, version: claim.version } };
  });
}
