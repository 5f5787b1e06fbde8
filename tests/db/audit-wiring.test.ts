import { describe, expect, it } from "vitest";
import { readableAuditEntries } from "@/lib/use-cases/audit/readable-audit-entries";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { listAuditEntries, verifyAuditChains, type AuditEntry } from "@/lib/stores/audit-log";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { raiseDivergence, resolveDivergence } from "@/lib/use-cases/alerts/divergence";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { acquireLease } from "@/lib/stores/leases";
import { reconcileExecution, reconcilerActor } from "@/lib/use-cases/reconciliation/reconciler";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import {
  agent,
  alice,
  connectorsFor,
  failure,
  lostAnswer,
  refund,
  runningTask,
  unreachable,
  reviewRow,
} from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { sandbox } from "@/tests/sandbox/helpers";

/**
 * Every write path of the engine leaves its audit entry in the transaction
 * of the write, driven through the engine as the API and the console drive
 * it: the entries are read back per stream, refused and stale writes are
 * shown to leave none, and the chains verify at the end.
 */
const db = useTestDatabase();
const engineer: Actor = { identity: "spiffe://verity.local/user/engineer", kind: "user" };
const otherAgent: Actor = { identity: "spiffe://verity.local/agent/other-bot", kind: "agent" };

/** A task's entries (across its task, execution, review, alert and checkpoint chains), grouped by stream in seq order. */
async function streamsOf(taskId: string): Promise<Map<string, AuditEntry[]>> {
  const { items: stored, nextCursor } = await listAuditEntries(db, { task: taskId }, { limit: 1000 });
  expect(nextCursor).toBeNull();
  // As people read them: the values sealed at rest that entries quote, opened.
  const items = await readableAuditEntries(db, stored);
  const streams = new Map<string, AuditEntry[]>();
  for (const e of [...items].sort((a, b) => a.stream.localeCompare(b.stream) || a.seq - b.seq))
    streams.set(e.stream, [...(streams.get(e.stream) ?? []), e]);
  return streams;
}

async function actionsOf(stream: string): Promise<string[]> {
  const rows = await db.$queryRaw<
    Array<{ action: string }>
  >`SELECT action FROM audit_entries WHERE stream = ${stream} ORDER BY seq`;
  return rows.map((r) => r.action);
}

const totalEntries = async () =>
  Number((await db.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM audit_entries`)[0]!.n);

describe("audit wiring", () => {
  it("task writes: creation and each applied transition are entries; a stale or lease-refused write is none", async () => {
    const task = await runningTask(db); // created, PLANNING, READY, RUNNING: v4
    const stream = `task:${task.id}`;
    expect(await actionsOf(stream)).toEqual([
      "task.created",
      "task.transitioned",
      "task.transitioned",
      "task.transitioned",
    ]);
    const [created, , , running] = (await streamsOf(task.id)).get(stream)!;
    expect(created).toMatchObject({
      seq: 1,
      actor: agent.identity,
      actorKind: "agent",
      subjectType: "task",
      subjectId: task.id,
      taskId: task.id,
    });
    expect(created!.details).toMatchObject({ from_version: null, to_version: 1, from_status: null, reason: "created" });
    expect(running!.details).toMatchObject({
      from_version: 3,
      to_version: 4,
      from_status: "READY",
      to_status: "RUNNING",
    });
    const transitionIds = (
      await db.transition.findMany({ where: { taskId: task.id }, orderBy: { toVersion: "asc" } })
    ).map((t) => t.id);
    expect((await streamsOf(task.id)).get(stream)!.map((e) => e.details.transition_id)).toEqual(transitionIds);

    const before = await totalEntries();
    // Stale: seen on the read, and (below) lost in the CAS statement itself.
    expect((await failure(transitionTask(db, task.id, { expected_version: 2, to: "CANCELLED" }, agent))).code).toBe(
      "version_conflict",
    );
    // Lease-refused: the version matches, so the CAS statement runs and its
    // UPDATE matches no row; the guarded audit insert must then write nothing.
    const lease = await acquireLease(db, task.id, { ttl_seconds: 600 }, otherAgent);
    expect(
      (await failure(transitionTask(db, task.id, { expected_version: 4, patch: { budget: { hops_used: 1 } } }, agent)))
        .code,
    ).toBe("lease_conflict");
    expect(
      (
        await failure(
          transitionTask(
            db,
            task.id,
            {
              expected_version: 4,
              patch: { budget: { hops_used: 1 } },
              fencing_token: String(BigInt(lease.fencingToken) + 1n),
            },
            otherAgent,
          ),
        )
      ).code,
    ).toBe("lease_conflict");
    expect(await totalEntries()).toBe(before);
    expect(await db.transition.count({ where: { taskId: task.id } })).toBe(4);

    // The holder's write goes through and is recorded once.
    await transitionTask(
      db,
      task.id,
      { expected_version: 4, patch: { budget: { hops_used: 1 } }, fencing_token: lease.fencingToken },
      otherAgent,
    );
    expect(await actionsOf(stream)).toHaveLength(5);
    expect(await totalEntries()).toBe(before + 1);
  });

  it("an execution intent → sent → unknown → reconciled against the sandbox: one entry per event, by who moved it", async () => {
    const s = await sandbox();
    const task = await runningTask(db);
    const intent = await recordIntent(
      db,
      task.id,
      { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: task.version },
      agent,
    );
    if (intent.kind !== "proceed") throw new Error("expected proceed");
    await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
    const row = await getExecutionRowOrThrow(db, intent.execution.id);
    await lostAnswer(s.url, row);
    await recordOutcome(db, row.id, { attempt_id: row.attemptId, outcome: "unknown", error: "timeout" }, agent);
    const reconciled = await reconcileExecution(db, row.id, connectorsFor(s.url));
    expect(reconciled.action).toBe("reconciled_succeeded");

    const entries = (await streamsOf(task.id)).get(`execution:${row.id}`)!;
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ["execution.intent_recorded", agent.identity],
      ["execution.sent", agent.identity],
      ["execution.outcome_unknown", agent.identity],
      ["reconciliation.succeeded", reconcilerActor.identity],
    ]);
    expect(entries.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(entries[3]!.details).toMatchObject({
      from_status: "OUTCOME_UNKNOWN",
      to_status: "RECONCILED_SUCCEEDED",
      idempotency_key: row.idempotencyKey,
      evidence: { source: "lookup" },
    });
    // Each execution event is one entry, and the task's moves are in its own chain.
    expect(await db.executionEvent.count({ where: { executionId: row.id } })).toBe(entries.length);
    const moves = await db.transition.findMany({ where: { taskId: task.id }, orderBy: { toVersion: "asc" } });
    expect((await streamsOf(task.id)).get(`task:${task.id}`)!.map((e) => e.details.transition_id)).toEqual(
      moves.map((t) => t.id),
    );
  });

  it("a review opened by the reconciler and decided by a person; a stale decision records nothing", async () => {
    const task = await runningTask(db);
    const intent = await recordIntent(
      db,
      task.id,
      { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: task.version },
      agent,
    );
    if (intent.kind !== "proceed") throw new Error("expected proceed");
    await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
    await recordOutcome(
      db,
      intent.execution.id,
      { attempt_id: intent.execution.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    expect((await reconcileExecution(db, intent.execution.id, unreachable)).action).toBe("needs_human");
    const review = await reviewRow(db, { executionId: intent.execution.id });

    await decideReview(
      db,
      review.id,
      { expected_version: review.version, decision: "reject", reason: "customer withdrew the request" },
      alice,
      unreachable,
    );
    const before = await totalEntries();
    expect(
      (
        await failure(
          decideReview(
            db,
            review.id,
            { expected_version: review.version, decision: "reject", reason: "again" },
            alice,
            unreachable,
          ),
        )
      ).code,
    ).toBe("version_conflict");
    expect(await totalEntries()).toBe(before);

    const entries = (await streamsOf(task.id)).get(`review:${review.id}`)!;
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ["review.opened", reconcilerActor.identity],
      ["review.decided", alice.identity],
    ]);
    expect(entries[1]!.details).toMatchObject({
      decision: "reject",
      reason: "customer withdrew the request",
      status_after: "REJECTED",
    });
    expect((await actionsOf(`execution:${intent.execution.id}`)).slice(-2)).toEqual([
      "reconciliation.needs_human",
      "execution.cancelled",
    ]);
  });

  it("a divergence raised and resolved; a second resolve of the same version records nothing", async () => {
    const task = await runningTask(db);
    const alert = await db.$transaction((tx) =>
      raiseDivergence(
        tx,
        {
          taskId: task.id,
          kind: "effect_missing_at_provider",
          message: "the provider has no such refund",
          internal: { status: "SUCCEEDED" },
          external: {},
        },
        reconcilerActor,
      ),
    );
    // Seen again on the next pass: the same open alert, no second entry.
    await db.$transaction((tx) =>
      raiseDivergence(
        tx,
        { taskId: task.id, kind: "effect_missing_at_provider", message: "again", internal: {}, external: {} },
        reconcilerActor,
      ),
    );
    await resolveDivergence(db, alert.id, { expectedVersion: 1, resolution: "refund re-issued by hand" }, alice);
    const before = await totalEntries();
    expect(
      (await failure(resolveDivergence(db, alert.id, { expectedVersion: 1, resolution: "twice" }, alice))).code,
    ).toBe("version_conflict");
    expect(await totalEntries()).toBe(before);

    const entries = (await streamsOf(task.id)).get(`divergence_alert:${alert.id}`)!;
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ["divergence.raised", reconcilerActor.identity],
      ["divergence.resolved", alice.identity],
    ]);
    expect(entries[1]!.details).toMatchObject({ resolution: "refund re-issued by hand", version: 2 });
  });

  it("a checkpoint taken, a restore refused (in the checkpoint's chain) and one applied (one task.restored, no second entry for its transition)", async () => {
    const { task } = await createTask(db, { workflow: "agent-task", intent_id: "audit-restore" }, agent);
    let version = task.version;
    for (const to of ["PLANNING", "READY"])
      version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
    const { checkpoint } = await createCheckpoint(db, task.id, { expected_version: version }, engineer);
    version = (await transitionTask(db, task.id, { expected_version: version, to: "RUNNING" }, agent)).task.version;

    const refused = await failure(
      restoreCheckpoint(db, checkpoint.id, { expected_version: version, reason: "back to READY" }, engineer),
    );
    expect(refused.invariants).toEqual(["stale"]);
    const applied = await restoreCheckpoint(
      db,
      checkpoint.id,
      { expected_version: version, rewind: true, reason: "back to READY" },
      engineer,
    );
    expect(applied.task.version).toBe(version + 1);

    const streams = await streamsOf(task.id);
    expect(streams.get(`checkpoint:${checkpoint.id}`)!.map((e) => [e.action, e.actor])).toEqual([
      ["checkpoint.created", engineer.identity],
      ["checkpoint.restore_refused", engineer.identity],
    ]);
    expect(streams.get(`checkpoint:${checkpoint.id}`)![1]!.details).toMatchObject({ refusal: "stale", rewind: false });
    const taskEntries = streams.get(`task:${task.id}`)!;
    expect(taskEntries.map((e) => e.action)).toEqual([
      "task.created",
      "task.transitioned",
      "task.transitioned",
      "task.transitioned",
      "task.restored",
    ]);
    expect(taskEntries.at(-1)!.details).toMatchObject({
      checkpoint_id: checkpoint.id,
      rewind: true,
      from_version: version,
      to_version: version + 1,
      transition_id: applied.transition.id,
    });
  });

  it("an automatic checkpoint is recorded with the transition that crossed its boundary", async () => {
    const task = await runningTask(db);
    const cancelled = await transitionTask(db, task.id, { expected_version: task.version, to: "CANCELLED" }, agent);
    const checkpoint = await db.checkpoint.findFirstOrThrow({ where: { taskId: task.id, trigger: "cancelled" } });
    expect(await actionsOf(`checkpoint:${checkpoint.id}`)).toEqual(["checkpoint.created"]);
    expect((await streamsOf(task.id)).get(`checkpoint:${checkpoint.id}`)![0]!.details).toMatchObject({
      state_version: cancelled.task.version,
      trigger: "cancelled",
    });
  });

  it("every chain written above verifies", async () => {
    const verification = await verifyAuditChains(db);
    expect(verification.firstBreak).toBeNull();
    expect(verification.ok).toBe(true);
    expect(verification.entries).toBe(await totalEntries());
  });
});
