import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Principal, Role } from "@/lib/model/permissions";
import { createTenant } from "@/lib/stores/tenants";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { raiseDivergence } from "@/lib/use-cases/alerts/divergence";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { claimInboxItem } from "@/lib/use-cases/inbox/claim-inbox-item";
import { gatherInbox } from "@/lib/use-cases/inbox/gather-inbox";
import { reconcileExecution, reconcilerActor } from "@/lib/use-cases/reconciliation/reconciler";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { agent, failure, refundExecution, runningTask, unreachable } from "@/tests/helpers/effects";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * The inbox on the embedded database (docs/inbox.md): every kind of item
 * gathered from real rows, filtered by what the role may act on, kept to
 * the tenant by row-level security, and claims written by compare-and-swap
 * with their audit entries.
 */

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await openTestPglite();
  db = t.db;
});
afterAll(async () => t.close());

function person(name: string, role: Role, tenantId = "default"): Principal {
  return {
    kind: "user",
    id: name,
    identity: `spiffe://verity.local/user/${name}`,
    role,
    displayName: name,
    tenantId,
  };
}
const operator = person("olivia", "operator");
const operator2 = person("oscar", "operator");
const engineer = person("emil", "engineer");
const auditor = person("ada", "auditor");

interface Fixture {
  reviewTaskId: string;
  reviewKey: string;
  escalatedTaskId: string;
  deliveryTaskId: string;
  alertKey: string;
}

/** One of each kind in `target`: a frozen refund, an escalation with no call, a delivery task at its human gates, an open alert. */
async function everyKind(target: Db): Promise<Fixture> {
  const execution = await refundExecution(target);
  await recordOutcome(
    target,
    execution.id,
    { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
    agent,
  );
  expect((await reconcileExecution(target, execution.id, unreachable)).action).toBe("needs_human");
  const review = await target.review.findFirstOrThrow({ where: { executionId: execution.id } });

  const escalated = await runningTask(target);
  await transitionTask(
    target,
    escalated.id,
    { expected_version: escalated.version, to: "WAITING_FOR_HUMAN", reason: "amounts differ; a person checks" },
    agent,
  );

  const { task: delivery } = await createTask(target, { workflow: "delivery", intent_id: "ship-it" }, agent);
  let version = delivery.version;
  for (const step of [
    { patch: { gates: { plan_approved: true } } },
    { to: "implementing" },
    { patch: { gates: { implementation_complete: true } } },
    { to: "reviewing" },
    { patch: { gates: { review_passed: true } } },
    { to: "testing" },
  ])
    version = (await transitionTask(target, delivery.id, { expected_version: version, ...step }, agent)).task.version;

  const alerted = await runningTask(target);
  const alert = await target.$transaction((tx) =>
    raiseDivergence(
      tx,
      { taskId: alerted.id, kind: "effect_missing_at_provider", message: "test", internal: {}, external: {} },
      reconcilerActor,
    ),
  );
  return {
    reviewTaskId: review.taskId,
    reviewKey: `review:${review.id}`,
    escalatedTaskId: escalated.id,
    deliveryTaskId: delivery.id,
    alertKey: `alert:${alert.id}`,
  };
}

describe("the inbox", () => {
  let fixture: Fixture;
  beforeAll(async () => {
    fixture = await everyKind(db);
  });

  it("gathers every kind waiting on an operator, and an escalated task with a review only as that review", async () => {
    const items = await gatherInbox(db, operator);
    const keys = items.map((i) => i.key).sort();
    expect(keys).toEqual(
      [
        fixture.reviewKey,
        `task:${fixture.escalatedTaskId}`,
        `gate:${fixture.deliveryTaskId}:deployment_approved`,
        fixture.alertKey,
      ].sort(),
    );
    // The reviewed task is WAITING_FOR_HUMAN too, and is listed once: as its review.
    expect(keys).not.toContain(`task:${fixture.reviewTaskId}`);
    const review = items.find((i) => i.key === fixture.reviewKey);
    expect(review).toMatchObject({
      kind: "review",
      amountMinor: 2500,
      currency: "usd",
      href: expect.stringMatching(/^\/reviews\//),
    });
    const escalated = items.find((i) => i.kind === "escalated_task");
    expect(escalated?.why).toContain("amounts differ; a person checks");
    expect(items.every((i) => i.claim.claimedBy === null && i.claim.version === 0)).toBe(true);
  });

  it("shows each role only what it may act on: an engineer the engineer's gate and the alerts, an auditor nothing", async () => {
    const engineers = (await gatherInbox(db, engineer)).map((i) => i.key).sort();
    expect(engineers).toEqual([`gate:${fixture.deliveryTaskId}:security_approved`, fixture.alertKey].sort());
    expect(await gatherInbox(db, auditor)).toEqual([]);
  });

  it("claims by compare-and-swap with an audit entry; another person sees the claim and cannot take or release it", async () => {
    const first = await claimInboxItem(db, { item: fixture.reviewKey, expected_version: 0, action: "claim" }, operator);
    expect(first).toMatchObject({ claimedBy: operator.identity, version: 1 });
    // A second person, on the page drawn before the claim: a conflict naming the holder, nothing changed.
    const lost = await failure(
      claimInboxItem(db, { item: fixture.reviewKey, expected_version: 0, action: "claim" }, operator2),
    );
    expect(lost.code).toBe("version_conflict");
    expect(lost.details).toMatchObject({ claim: { claimedBy: operator.identity } });
    // On a fresh page: still the holder's to release.
    expect(
      (
        await failure(
          claimInboxItem(db, { item: fixture.reviewKey, expected_version: 1, action: "unclaim" }, operator2),
        )
      ).code,
    ).toBe("version_conflict");
    const seen = (await gatherInbox(db, operator2)).find((i) => i.key === fixture.reviewKey);
    expect(seen?.claim).toMatchObject({ claimedBy: operator.identity, version: 1 });

    const released = await claimInboxItem(
      db,
      { item: fixture.reviewKey, expected_version: 1, action: "unclaim" },
      operator,
    );
    expect(released).toMatchObject({ claimedBy: null, version: 2 });
    const taken = await claimInboxItem(
      db,
      { item: fixture.reviewKey, expected_version: 2, action: "claim" },
      operator2,
    );
    expect(taken).toMatchObject({ claimedBy: operator2.identity, version: 3 });

    const audit = await t.sql<{ action: string; actor: string; subject_id: string }>(
      "SELECT action, actor, subject_id FROM audit_entries WHERE subject_type = 'inbox_item' ORDER BY at, seq",
    );
    expect(audit.map((a) => [a.action, a.actor])).toEqual([
      ["inbox.claimed", operator.identity],
      ["inbox.unclaimed", operator.identity],
      ["inbox.claimed", operator2.identity],
    ]);
    expect(new Set(audit.map((a) => a.subject_id))).toEqual(new Set([fixture.reviewKey]));
    expect((await verifyAuditChains(db)).ok).toBe(true);
  });

  it("refuses to claim what is not in the person's inbox (another role's kind, a made-up key, a bad key) alike", async () => {
    const auditorTry = await failure(
      claimInboxItem(db, { item: fixture.alertKey, expected_version: 0, action: "claim" }, auditor),
    );
    expect(auditorTry.code).toBe("not_found");
    const madeUp = await failure(
      claimInboxItem(db, { item: "review:rev_does_not_exist", expected_version: 0, action: "claim" }, operator),
    );
    expect(madeUp.code).toBe("not_found");
    // The operator's inbox has no security gate: an engineer's, answered like a made-up key.
    const othersGate = await failure(
      claimInboxItem(
        db,
        { item: `gate:${fixture.deliveryTaskId}:security_approved`, expected_version: 0, action: "claim" },
        operator,
      ),
    );
    expect(othersGate.code).toBe("not_found");
    const bad = await failure(
      claimInboxItem(db, { item: "drop table", expected_version: 0, action: "claim" }, operator),
    );
    expect(bad.code).toBe("validation_failed");
    expect(await db.inboxClaim.count({ where: { itemKey: { not: fixture.reviewKey } } })).toBe(0);
  });

  it("keeps each tenant to its own items and claims: another tenant's key answers not_found", async () => {
    const other = "inbox-other-tenant";
    await createTenant(
      t.platformDb,
      { id: other, name: "Other" },
      { identity: "spiffe://verity.local/system/test", kind: "system" },
    );
    const otherDb = t.forTenant(other);
    await registerBuiltInWorkflows(otherDb);
    const theirs = await everyKind(otherDb);
    const otherOperator = person("olga", "operator", other);
    const mine = new Set((await gatherInbox(db, operator)).map((i) => i.key));
    const theirKeys = (await gatherInbox(otherDb, otherOperator)).map((i) => i.key);
    expect(theirKeys).toHaveLength(4);
    expect(theirKeys.filter((k) => mine.has(k))).toEqual([]);
    expect(
      (await failure(claimInboxItem(db, { item: theirs.alertKey, expected_version: 0, action: "claim" }, operator)))
        .code,
    ).toBe("not_found");
    await claimInboxItem(otherDb, { item: theirs.alertKey, expected_version: 0, action: "claim" }, otherOperator);
    // The claim is theirs alone: the first tenant's connection does not see the row.
    expect(await db.inboxClaim.count({ where: { itemKey: theirs.alertKey } })).toBe(0);
    expect(await otherDb.inboxClaim.count({ where: { itemKey: theirs.alertKey } })).toBe(1);
  });
});
