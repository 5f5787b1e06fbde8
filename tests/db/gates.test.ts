import { describe, expect, it } from "vitest";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { approveGate } from "@/lib/use-cases/tasks/approve-gate";
import { getTaskOrThrow, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { deliveryV1 } from "@/lib/model/workflows/delivery";
import { evaluateTransition } from "@/lib/model/tasks/transition-rules";
import { userIdentity, type Principal, type Role } from "@/lib/model/permissions";
import { isAppError } from "@/lib/core/errors";
import { agent } from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * Human gates (issue 11): in `delivery`, security_approved and
 * deployment_approved are a person's decision, set through approveGate by
 * the roles the definition names; an agent's patch setting them is refused
 * by the transition rules, whatever adapter it came through.
 */
const db = useTestDatabase();

/** The AppError a call throws, with its message: the rule in words is part of what is tested. */
async function failure(promise: Promise<unknown>): Promise<{ code: string; invariants: string[]; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (!isAppError(error)) throw error;
    return {
      code: error.code,
      invariants: (error.details.violations ?? []).map((v) => v.invariant),
      message: error.message,
    };
  }
  throw new Error("expected a failure");
}

function person(username: string, role: Role): Principal {
  return {
    kind: "user",
    id: username,
    identity: userIdentity(username),
    role,
    tenantId: "default",
    displayName: username,
  };
}
const eli = person("eli", "engineer");
const olivia = person("olivia", "operator");
const ana = person("ana", "admin");
const ada = person("ada", "auditor");
const agentPrincipal: Principal = {
  kind: "agent",
  id: "tok",
  identity: agent.identity,
  role: "agent",
  displayName: "refund-bot",
  tenantId: "default",
};

/** A delivery task driven by the agent to `testing`, as far as an agent may take it alone. */
async function deliveryInTesting(): Promise<{ id: string; version: number }> {
  const { task } = await createTask(db, { workflow: "delivery", intent_id: "ship" }, agent);
  let version = task.version;
  const step = async (body: Record<string, unknown>) => {
    version = (await transitionTask(db, task.id, { expected_version: version, ...body }, agent)).task.version;
  };
  await step({ patch: { gates: { plan_approved: true } } });
  await step({ to: "implementing" });
  await step({ patch: { gates: { implementation_complete: true } } });
  await step({ to: "reviewing" });
  await step({ patch: { gates: { review_passed: true } } });
  await step({ to: "testing" });
  await step({ patch: { gates: { tests_passing: true } } });
  return { id: task.id, version };
}

describe("an agent cannot set a person's gate", () => {
  // The reproduction: with only the agent token, a delivery task went from
  // planning to complete, the agent setting the approvals itself.
  it("refuses the agent's patch setting security_approved and deployment_approved, naming the gate and the roles; the task stays in testing", async () => {
    const task = await deliveryInTesting();
    const patch = await failure(
      transitionTask(
        db,
        task.id,
        { expected_version: task.version, patch: { gates: { security_approved: true, deployment_approved: true } } },
        agent,
      ),
    );
    expect(patch.code).toBe("forbidden");
    expect(patch.invariants).toEqual(["gate_set_by_people", "gate_set_by_people"]);
    expect(patch.message).toContain("security_approved");
    expect(patch.message).toContain("engineer or admin");
    expect(patch.message).toContain("deployment_approved");
    expect(patch.message).toContain("operator or admin");

    const ship = await failure(
      transitionTask(
        db,
        task.id,
        {
          expected_version: task.version,
          to: "complete",
          patch: { gates: { security_approved: true, deployment_approved: true } },
        },
        agent,
      ),
    );
    expect(ship).toMatchObject({ code: "forbidden", invariants: ["gate_set_by_people", "gate_set_by_people"] });
    expect(await getTaskOrThrow(db, task.id)).toMatchObject({ status: "testing", version: task.version });
    expect((await approveGateFails(task, agentPrincipal, "security_approved")).code).toBe("forbidden");
  });

  it("holds for a task pinned to delivery v1, whose definition predates the gate rules", async () => {
    const task = await getTaskOrThrow(db, (await deliveryInTesting()).id);
    const evaluation = evaluateTransition(deliveryV1, task.state, {
      to: "complete",
      patch: { gates: { security_approved: true, deployment_approved: true } },
      actorKind: "agent",
    });
    expect(evaluation).toMatchObject({ ok: false, reason: "actor_not_permitted" });
    if (!evaluation.ok)
      expect(evaluation.violations.map((v) => v.invariant)).toEqual(["gate_set_by_people", "gate_set_by_people"]);
  });

  it("a person cannot slip a human gate through the plain transition path either", async () => {
    const task = await deliveryInTesting();
    const refused = await failure(
      transitionTask(
        db,
        task.id,
        { expected_version: task.version, patch: { gates: { security_approved: true } } },
        { identity: eli.identity, kind: "user" },
      ),
    );
    expect(refused.invariants).toEqual(["gate_set_by_people"]);
    expect(refused.message).toContain("approval form");
  });
});

function approveGateFails(
  task: { id: string; version: number },
  who: Principal,
  gate: "security_approved" | "deployment_approved",
) {
  return failure(approveGate(db, task.id, { expected_version: task.version, gate, reason: "looks right" }, who));
}

describe("people approve through approveGate", () => {
  it("by role, with a reason, four eyes apart; the approvals are in the transition log and the audit chain; then the agent ships", async () => {
    const task = await deliveryInTesting();
    const wrongRole = await approveGateFails(task, olivia, "security_approved");
    expect(wrongRole.code).toBe("forbidden");
    expect(wrongRole.message).toContain("engineer or admin");
    expect((await approveGateFails(task, ada, "deployment_approved")).message).toContain("operator or admin");
    const noReason = await failure(
      approveGate(db, task.id, { expected_version: task.version, gate: "security_approved", reason: " " }, eli),
    );
    expect(noReason.code).toBe("validation_failed");

    const security = await approveGate(
      db,
      task.id,
      { expected_version: task.version, gate: "security_approved", reason: "threat model reviewed" },
      eli,
    );
    expect(security.task.state.gates.security_approved).toBe(true);
    expect(security.transition).toMatchObject({ actor: eli.identity, actorKind: "user" });
    expect(security.transition.reason).toContain("threat model reviewed");

    // Four eyes: an admin may set either gate, but not both on one task.
    const other = await deliveryInTesting();
    const sameAdmin = await approveGate(
      db,
      other.id,
      { expected_version: other.version, gate: "security_approved", reason: "ok" },
      ana,
    );
    const fourEyes = await failure(
      approveGate(
        db,
        sameAdmin.task.id,
        { expected_version: sameAdmin.task.version, gate: "deployment_approved", reason: "ship it" },
        ana,
      ),
    );
    expect(fourEyes).toMatchObject({ code: "forbidden", invariants: ["four_eyes"] });

    const stale = await failure(
      approveGate(
        db,
        task.id,
        { expected_version: task.version, gate: "deployment_approved", reason: "deploy window agreed" },
        olivia,
      ),
    );
    expect(stale.code).toBe("version_conflict");
    const deployment = await approveGate(
      db,
      task.id,
      { expected_version: security.task.version, gate: "deployment_approved", reason: "deploy window agreed" },
      olivia,
    );
    expect(deployment.task.state.gates.deployment_approved).toBe(true);
    const again = await failure(
      approveGate(
        db,
        task.id,
        { expected_version: deployment.task.version, gate: "deployment_approved", reason: "again" },
        ana,
      ),
    );
    expect(again.invariants).toEqual(["gate_not_yet_set"]);

    const shipped = await transitionTask(
      db,
      task.id,
      { expected_version: deployment.task.version, to: "complete" },
      agent,
    );
    expect(shipped.task.status).toBe("complete");

    const approvals = (await listTransitions(db, task.id)).filter((t) => t.actorKind === "user");
    expect(approvals.map((t) => [t.actor, t.patch.gates])).toEqual([
      [eli.identity, { security_approved: true }],
      [olivia.identity, { deployment_approved: true }],
    ]);
    const audited = await db.auditEntry.findMany({
      where: { taskId: task.id, actor: { in: [eli.identity, olivia.identity] } },
      select: { actor: true },
    });
    expect(new Set(audited.map((a) => a.actor))).toEqual(new Set([eli.identity, olivia.identity]));
  });

  it("a gate the agent sets as it works is not a person's approval", async () => {
    const task = await deliveryInTesting();
    const refused = await failure(
      approveGate(db, task.id, { expected_version: task.version, gate: "tests_passing", reason: "green" }, ana),
    );
    expect(refused.code).toBe("validation_failed");
  });
});
